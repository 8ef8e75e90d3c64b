// Reads an autotune state log (docs/formats/autotune-state.md) for the report, read-only:
// unlike measure::StateLog::Open() it takes no lock and never truncates, so it can read
// the log of a finished run or of one still running.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace qtune::report {

// One measurement record, reduced to what the report plots.
struct LogMeasurement {
  int line = 0;         // 1-based line in the log (the header is line 1)
  std::string pattern;  // pattern id, "baseline" or "final"
  std::string scheme;   // may be empty
  bool ok = false;
  double candidate_ms = 0;        // median of the per-round medians; NaN when none
  double reference_ms = 0;        // the same for the reference measured alongside; NaN when none
  std::string error_kind;         // when !ok
  std::optional<double> seconds;  // since the first record's timestamp; nullopt: unreadable
};

struct AutotuneLog {
  std::vector<LogMeasurement> measurements;  // file order
  std::vector<std::string> warnings;         // "<path>:<line>: ..." for skipped lines, the
                                             // first 5 of each kind, then a count
                                             // (core/warning_summary.h)
};

// Errors: NotFound (no file), DataLoss when line 1 is not a readable state log header of
// this format version. Damaged records (bad checksum, not JSON, missing fields), records of
// another run (header_id) and a torn last line are skipped with a warning, exactly as a
// warm restart skips them: both read through measure::ParseStateLog.
StatusOr<AutotuneLog> ReadAutotuneLog(const std::string& path);

// The median of `values`; NaN for none.
double Median(std::vector<double> values);

}  // namespace qtune::report
