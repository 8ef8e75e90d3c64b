// The state log of `qtune tune`: the autotune state log's format (measure/state_log.h,
// docs/formats/autotune-state.md) in the work dir, one record per measured row. A record
// is keyed by the content of what was measured (the candidate and reference files' SHA-256,
// bf16 or not) and by the measuring machine, so a rerun on the same work dir takes every
// row measured before instead of measuring it again: a killed tune resumes, and a candidate
// that built differently (other calibration data, recipe, plan) is measured afresh.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/benchmark.h"
#include "measure/state_log.h"
#include "tune/tune.h"

namespace qtune::tune {

// What one row's measurement compared, by content, and where it was measured.
struct RowMeasurementKey {
  std::string candidate_sha256;  // the candidate model file
  bool bf16 = false;             // the candidate computed in bfloat16
  std::string reference_sha256;  // the fp32 file measured alongside; empty: none
  std::string machine;           // measure::MachineInfo::Fingerprint() of the measurer
  std::string ToString() const;  // the record's key
};

class TuneLog {
 public:
  // Opens (creating it when missing) WORK_DIR/state.jsonl for a tune of the cleaned fp32
  // model whose file has `fp32_sha256`, measured at `sizes`. The header holds that SHA-256
  // and every option that changes a measurement (back end, warm-up, iterations,
  // rounds, sizes); a log of another model or other such options is refused
  // (InvalidArgument naming what differs; options.force_new keeps it beside a new one).
  static StatusOr<std::unique_ptr<TuneLog>> Open(const std::string& work_dir,
                                                 const std::string& fp32_sha256,
                                                 const TuneOptions& options,
                                                 const InputSizes& sizes);

  // The successful measurement of `key` an earlier run logged; null when there is none (a
  // failed measurement is measured again).
  const measure::MeasurementRecord* Find(const RowMeasurementKey& key) const;

  // Logs one row's measurement (success or failure). A log that cannot be written costs
  // only the resume: the error is a warning, and the row's result stands.
  void Append(const RowMeasurementKey& key, const TuneRow& row,
              const measure::Measurement& measurement);

  const std::string& path() const { return log_->path(); }

 private:
  explicit TuneLog(std::unique_ptr<measure::StateLog> log);

  std::unique_ptr<measure::StateLog> log_;
  std::map<std::string, measure::MeasurementRecord> measured_;  // ok records by key
};

}  // namespace qtune::tune
