#include "conformance/ort_yardstick.h"

#include <sstream>

#include "core/file_io.h"

namespace qtune::conformance {

StatusOr<std::map<std::string, std::string>> ReadNamedLines(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::map<std::string, std::string> lines;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    size_t name_end = line.find_first_of(" \t", begin);
    size_t rest = name_end == std::string::npos ? std::string::npos
                                                : line.find_first_not_of(" \t\r", name_end);
    if (rest == std::string::npos) {
      return InvalidArgumentError(path + ":" + std::to_string(number) + ": '" + line.substr(begin) +
                                  "' has no verdict or reason after the test name; write "
                                  "'<folder>/<test> <reason>'");
    }
    size_t end = line.find_last_not_of(" \t\r");
    lines[line.substr(begin, name_end - begin)] = line.substr(rest, end - rest + 1);
  }
  return lines;
}

std::set<std::string> OrtPassing(const std::map<std::string, std::string>& ort_results) {
  std::set<std::string> passing;
  for (const auto& [name, rest] : ort_results) {
    if (rest == "PASS" || rest.rfind("PASS ", 0) == 0) passing.insert(name);
  }
  return passing;
}

YardstickReport CompareWithOrt(const std::map<std::string, std::optional<std::string>>& results,
                               const std::map<std::string, std::string>& ort_results,
                               const std::map<std::string, std::string>& reasons,
                               const std::set<std::string>& explained) {
  YardstickReport report;
  const std::set<std::string> ort_passing = OrtPassing(ort_results);
  for (const auto& [name, failure] : results) {
    if (ort_results.count(name) == 0) report.missing_from_ort.push_back(name);
    const bool has_reason = reasons.count(name) > 0 || explained.count(name) > 0;
    if (!failure.has_value()) {
      if (reasons.count(name) > 0) report.stale_reasons.push_back(name);
      continue;
    }
    if (ort_passing.count(name) > 0 && !has_reason) {
      report.unexplained.push_back(name + ": " + *failure);
    }
  }
  return report;
}

}  // namespace qtune::conformance
