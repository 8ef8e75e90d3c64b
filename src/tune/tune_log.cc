#include "tune/tune_log.h"

#include <fmt/format.h>

#include <utility>

#include "core/logging.h"
#include "measure/redis_protocol.h"

namespace qtune::tune {

std::string RowMeasurementKey::ToString() const {
  return fmt::format("tune {}{} against {} on {}", candidate_sha256, bf16 ? " bf16" : "",
                     reference_sha256.empty() ? "-" : reference_sha256, machine);
}

TuneLog::TuneLog(std::unique_ptr<measure::StateLog> log) : log_(std::move(log)) {
  for (const measure::MeasurementRecord& record : log_->replayed()) {
    if (record.ok) measured_[record.key] = record;  // the last one of a key wins
  }
}

StatusOr<std::unique_ptr<TuneLog>> TuneLog::Open(const std::string& work_dir,
                                                 const std::string& fp32_sha256,
                                                 const TuneOptions& options,
                                                 const InputSizes& sizes) {
  measure::StateHeader header;
  header.qtune_version = measure::kQtuneVersion;
  header.model_sha256 = fp32_sha256;
  // What the measured latencies depend on besides the two files and the machine (in each
  // record's key). Thread counts are in the machine fingerprint.
  header.options = {{"command", "tune"},        {"benchmark", options.benchmark},
                    {"warmup", options.warmup}, {"iters", options.iters},
                    {"rounds", options.rounds}, {"input_sizes", sizes}};
  ASSIGN_OR_RETURN(std::unique_ptr<measure::StateLog> log,
                   measure::StateLog::OpenInWorkDir(work_dir, header, options.force_new));
  return std::unique_ptr<TuneLog>(new TuneLog(std::move(log)));
}

const measure::MeasurementRecord* TuneLog::Find(const RowMeasurementKey& key) const {
  auto it = measured_.find(key.ToString());
  return it == measured_.end() ? nullptr : &it->second;
}

void TuneLog::Append(const RowMeasurementKey& key, const TuneRow& row,
                     const measure::Measurement& measurement) {
  measure::MeasurementRecord record;
  record.key = key.ToString();
  record.pattern = row.candidate;
  record.scheme = fmt::format("threads {}", row.threads);
  record.ok = measurement.ok();
  if (record.ok) {
    record.candidate_ms = measurement.candidate_ms;
    record.reference_ms = measurement.reference_ms;
  } else {
    record.error_kind = measure::FailureKindName(measurement.failure, measurement.exit_code);
    record.error_detail = measurement.detail;
  }
  if (Status appended = log_->Append(record); !appended.ok()) {
    QTUNE_LOG_WARNING("tune: {} (this row will be measured again on a rerun)", appended.message());
    return;
  }
  if (record.ok) measured_[record.key] = std::move(record);
}

}  // namespace qtune::tune
