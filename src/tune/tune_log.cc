#include "tune/tune_log.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "autotune/redis_protocol.h"
#include "core/logging.h"
#include "core/sha256.h"
#include "core/warning_summary.h"

namespace qtune::tune {

std::string RowMeasurementKey::ToString() const {
  return fmt::format("tune {}{} against {} on {}", candidate_sha256, bf16 ? " bf16" : "",
                     reference_sha256.empty() ? "-" : reference_sha256, machine);
}

TuneLog::TuneLog(std::unique_ptr<autotune::StateLog> log) : log_(std::move(log)) {
  for (const measure::MeasurementRecord& record : log_->replayed()) {
    if (record.ok) measured_[record.key] = record;  // the last one of a key wins
  }
}

StatusOr<std::unique_ptr<TuneLog>> TuneLog::Open(const std::string& work_dir,
                                                 const std::string& fp32_path,
                                                 const TuneOptions& options,
                                                 const InputSizes& sizes) {
  measure::StateHeader header;
  header.qtune_version = autotune::kQtuneVersion;
  ASSIGN_OR_RETURN(header.model_sha256, Sha256File(fp32_path));
  // What the measured latencies depend on besides the two files and the machine (in each
  // record's key). Thread counts are in the machine fingerprint.
  header.options = {{"command", "tune"},        {"benchmark", options.benchmark},
                    {"warmup", options.warmup}, {"iters", options.iters},
                    {"rounds", options.rounds}, {"input_sizes", sizes}};
  const std::string path = (std::filesystem::path(work_dir) / "state.jsonl").string();
  std::vector<std::string> warnings;
  auto log =
      autotune::StateLog::Open(path, header, autotune::OpenOptions{options.force_new}, &warnings);
  if (!log.ok() && log.status().code() == StatusCode::kFailedPrecondition) {
    return InvalidArgumentError(log.status().message());  // another model, options or owner
  }
  if (!log.ok()) return log.status();
  for (const std::string& w : SummarizeLineWarnings(warnings)) QTUNE_LOG_WARNING("{}", w);
  return std::unique_ptr<TuneLog>(new TuneLog(std::move(*log)));
}

const measure::MeasurementRecord* TuneLog::Find(const RowMeasurementKey& key) const {
  auto it = measured_.find(key.ToString());
  return it == measured_.end() ? nullptr : &it->second;
}

void TuneLog::Append(const RowMeasurementKey& key, const TuneRow& row,
                     const autotune::Measurement& measurement) {
  measure::MeasurementRecord record;
  record.key = key.ToString();
  record.pattern = row.candidate;
  record.scheme = fmt::format("threads {}", row.threads);
  record.ok = measurement.ok();
  if (record.ok) {
    record.candidate_ms = measurement.candidate_ms;
    record.reference_ms = measurement.reference_ms;
  } else {
    record.error_kind = autotune::FailureKindName(measurement.failure, measurement.exit_code);
    record.error_detail = measurement.detail;
  }
  if (Status appended = log_->Append(record); !appended.ok()) {
    QTUNE_LOG_WARNING("tune: {} (this row will be measured again on a rerun)", appended.message());
    return;
  }
  if (record.ok) measured_[record.key] = std::move(record);
}

}  // namespace qtune::tune
