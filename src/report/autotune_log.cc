#include "report/autotune_log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/file_io.h"
#include "core/warning_summary.h"
#include "measure/state_log_format.h"

namespace qtune::report {
namespace {

// "2026-12-01T13:49:15.065Z" as seconds since the epoch; nullopt when malformed.
std::optional<double> ParseTimestamp(const std::string& text) {
  std::tm tm{};
  int millis = 0;
  char zone = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis, &zone) != 8 ||
      zone != 'Z') {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const time_t seconds = timegm(&tm);
  if (seconds == static_cast<time_t>(-1)) return std::nullopt;
  return static_cast<double>(seconds) + millis / 1000.0;
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

StatusOr<AutotuneLog> ReadAutotuneLog(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  // The same parse as a resume's (measure/state_log_format.h): the report plots exactly the
  // records a warm restart would replay, and warns about the same lines.
  ASSIGN_OR_RETURN(
      measure::ParsedStateLog parsed,
      measure::ParseStateLog(text, path, "the report is drawn from report.json alone"));
  AutotuneLog log;
  std::optional<double> first_time;
  for (const auto& [line, record] : parsed.records) {
    LogMeasurement m;
    m.line = line;
    m.pattern = record.pattern;
    m.scheme = record.scheme;
    m.ok = record.ok;
    m.candidate_ms = Median(record.candidate_ms);
    m.reference_ms = Median(record.reference_ms);
    m.error_kind = record.error_kind;
    if (auto t = ParseTimestamp(record.timestamp)) {
      if (!first_time) first_time = t;
      m.seconds = *t - *first_time;
    }
    log.measurements.push_back(std::move(m));
  }
  // A file of junk: a few lines, not 40 000.
  log.warnings = SummarizeLineWarnings(parsed.warnings);
  return log;
}

}  // namespace qtune::report
