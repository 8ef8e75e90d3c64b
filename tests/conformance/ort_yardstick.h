// ONNX Runtime as the yardstick for conformance: tests/conformance/ort_results.txt (written
// by tools/ort/conformance_ort.js) says which libonnx-testdata tests ORT passes, and
// tests/conformance/unsupported_reasons.txt says why qtune does not pass some of those.
//
// ort_results.txt: one `<folder>/<test> PASS|FAIL|ERROR [reason...]` per line.
// unsupported_reasons.txt: one `<folder>/<test> <reason...>` per line (the reason is
// required). In both, blank lines and lines starting with '#' are ignored.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace qtune::conformance {

// `<folder>/<test>` -> the rest of its line after the name. InvalidArgument (naming the
// line) for a line with a name and nothing after it; NotFound if the file is missing.
StatusOr<std::map<std::string, std::string>> ReadNamedLines(const std::string& path);

// The names whose ort_results.txt line says PASS.
std::set<std::string> OrtPassing(const std::map<std::string, std::string>& ort_results);

struct YardstickReport {
  // ORT passes, qtune does not, and no reason is listed: "name: qtune's detail".
  std::vector<std::string> unexplained;
  // Listed with a reason but qtune passes now (the reason is stale).
  std::vector<std::string> stale_reasons;
  // Ran here but ort_results.txt has no line for it (rerun conformance_ort.js).
  std::vector<std::string> missing_from_ort;
};

// `results`: every test that ran, by `<folder>/<test>`, mapped to nullopt when it passed or
// to why it did not. `explained`: names whose failure is accounted for elsewhere (listed
// expected failures), treated like names with a reason.
YardstickReport CompareWithOrt(const std::map<std::string, std::optional<std::string>>& results,
                               const std::map<std::string, std::string>& ort_results,
                               const std::map<std::string, std::string>& reasons,
                               const std::set<std::string>& explained);

}  // namespace qtune::conformance
