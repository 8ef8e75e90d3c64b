#include "report/autotune_log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/file_io.h"
#include "core/json_limits.h"
#include "core/sha256.h"
#include "core/warning_summary.h"
#include "report/json_fields.h"

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

std::optional<std::vector<double>> Latencies(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return std::nullopt;
  std::vector<double> values;
  for (const auto& v : *it) {
    if (!v.is_number()) return std::nullopt;
    values.push_back(v.get<double>());
  }
  return values;
}

// The JSON of a line whose checksum holds; nullopt (with `why`) otherwise.
std::optional<nlohmann::json> CheckedJson(const std::string& line, std::string* why) {
  const size_t space = line.find(' ');
  if (space != 16) {
    *why = "no checksum";
    return std::nullopt;
  }
  const std::string body = line.substr(space + 1);
  if (Sha256Hex(body).substr(0, 16) != line.substr(0, 16)) {
    *why = "checksum mismatch";
    return std::nullopt;
  }
  StatusOr<nlohmann::json> j = ParseUntrustedJson(body, "record");
  if (!j.ok() || !j->is_object()) {
    *why = j.ok() ? "not a JSON object" : j.status().message();
    return std::nullopt;
  }
  return std::move(*j);
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
  AutotuneLog log;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  std::optional<double> first_time;
  while (std::getline(in, line)) {
    ++line_no;
    const bool torn = in.eof() && !text.empty() && text.back() != '\n';
    std::string why;
    auto j = CheckedJson(line, &why);
    if (line_no == 1) {
      if (!j.has_value() || StringField(*j, "type") != "header") {
        return DataLossError(path + ":1: not a qtune autotune state log header (" +
                             (why.empty() ? "not a header" : why) +
                             "); pass the work dir of `qtune autotune` or its report.json");
      }
      continue;
    }
    if (!j.has_value()) {
      log.warnings.push_back(
          path + ":" + std::to_string(line_no) +
          (torn ? ": torn last record skipped (" : ": damaged record skipped (") + why + ")");
      continue;
    }
    if (StringField(*j, "type") != "measurement") continue;  // unknown record kinds: ignored
    auto candidate = Latencies(*j, "candidate_ms");
    auto reference = Latencies(*j, "reference_ms");
    auto ok = j->find("ok");
    if (!candidate || !reference || ok == j->end() || !ok->is_boolean()) {
      log.warnings.push_back(path + ":" + std::to_string(line_no) +
                             ": damaged record skipped (missing or mistyped field)");
      continue;
    }
    LogMeasurement m;
    m.line = line_no;
    m.pattern = StringField(*j, "pattern");
    m.scheme = StringField(*j, "scheme");
    m.ok = ok->get<bool>();
    m.candidate_ms = Median(*candidate);
    m.reference_ms = Median(*reference);
    m.error_kind = StringField(*j, "error_kind");
    if (auto t = ParseTimestamp(StringField(*j, "timestamp"))) {
      if (!first_time) first_time = t;
      m.seconds = *t - *first_time;
    }
    log.measurements.push_back(std::move(m));
  }
  if (line_no == 0) {
    return DataLossError(path + ": empty; not a qtune autotune state log");
  }
  log.warnings = SummarizeLineWarnings(log.warnings);  // a file of junk: a few lines, not 40 000
  return log;
}

}  // namespace qtune::report
