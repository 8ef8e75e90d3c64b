#include "conformance/passing_list.h"

#include <sstream>

#include "core/file_io.h"

namespace qtune::conformance {

StatusOr<std::set<std::string>> ReadPassingList(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::set<std::string> names;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    size_t end = line.find_last_not_of(" \t\r");
    names.insert(line.substr(begin, end - begin + 1));
  }
  return names;
}

Status WritePassingList(const std::string& path, const std::set<std::string>& names,
                        const std::string& folder) {
  std::string text =
      "# ONNX " + folder +
      " tests (libonnx-testdata) that pass on both tiers; conformance_node_test\n"
      "# fails when one of them stops passing. Regenerate after making more pass:\n"
      "#   QTUNE_CONFORMANCE_UPDATE_PASSING=1 <build>/tests/conformance/conformance_node_test\n";
  for (const std::string& name : names) text += name + "\n";
  return WriteFileAtomic(path, text);
}

PassingListReport ComparePassingList(
    const std::set<std::string>& listed,
    const std::map<std::string, std::optional<std::string>>& results, bool filtered) {
  PassingListReport report;
  for (const auto& [name, failure] : results) {
    const bool is_listed = listed.count(name) > 0;
    if (failure.has_value() && is_listed) report.regressed.push_back(name + ": " + *failure);
    if (!failure.has_value() && !is_listed) report.newly_passing.push_back(name);
  }
  if (!filtered) {
    for (const std::string& name : listed) {
      if (results.count(name) == 0) report.not_run.push_back(name);
    }
  }
  return report;
}

}  // namespace qtune::conformance
