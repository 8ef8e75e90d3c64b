// Fuzz target for the autotune state log (docs/formats/autotune-state.md): the bytes are
// written as state.jsonl and read by both readers, measure::StateLog::Open (the tuner's:
// replay, torn-tail truncation, header checks) and report::ReadAutotuneLog (the report's).
// Half the inputs (picked from the input's first byte) get every line's checksum
// recomputed first, so mutated JSON reaches the parser rather than stopping at the
// checksum. The header the corpus was written with (make_json_corpus.cc) is the one
// opened with, so records replay. A record that replays must append again, and the two
// readers, which share one parser (measure/state_log_format.h), must take the same records.
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "fuzz/json_fuzz_util.h"
#include "fuzz/state_log_fuzz_header.h"
#include "measure/state_log.h"
#include "report/autotune_log.h"

namespace qtune::fuzz {

const char* const kTargetName = "state_log";

namespace {

int64_t g_inputs = 0, g_opened = 0, g_replayed = 0, g_report_read = 0, g_report_records = 0;

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  ++g_inputs;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string text =
      size > 0 && (data[0] & 1) != 0 ? ResignStateLogLines(bytes) : std::string(bytes);
  const std::string path = ScratchPath("state_log") + ".jsonl";
  WriteScratchFile(kTargetName, path, text);
  auto report_log = report::ReadAutotuneLog(path);
  if (report_log.ok()) {
    ++g_report_read;
    g_report_records += static_cast<int64_t>(report_log->measurements.size());
  }
  std::vector<std::string> warnings;
  auto log = measure::StateLog::Open(path, FuzzStateHeader(), measure::OpenOptions{}, &warnings);
  if (log.ok()) {
    ++g_opened;
    g_replayed += static_cast<int64_t>((*log)->replayed().size());
    if (report_log.ok() && report_log->measurements.size() != (*log)->replayed().size()) {
      FailTarget(kTargetName, "the report read " + std::to_string(report_log->measurements.size()) +
                                  " records, the resume " +
                                  std::to_string((*log)->replayed().size()));
    }
    if (!(*log)->replayed().empty()) {
      measure::MeasurementRecord again = (*log)->replayed().front();
      again.timestamp.clear();
      if (Status s = (*log)->Append(again); !s.ok()) {
        FailTarget(kTargetName, "a replayed record does not append: " + s.ToString());
      }
    }
  }
  return 0;
}

void PrintTargetStats() {
  std::remove((ScratchPath("state_log") + ".jsonl").c_str());
  std::fprintf(stderr,
               "state_log target: %lld inputs, %lld opened (%lld records replayed), %lld read "
               "by the report (%lld records)\n",
               static_cast<long long>(g_inputs), static_cast<long long>(g_opened),
               static_cast<long long>(g_replayed), static_cast<long long>(g_report_read),
               static_cast<long long>(g_report_records));
}

}  // namespace qtune::fuzz
