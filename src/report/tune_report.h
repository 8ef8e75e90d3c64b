// The HTML report of a tune result: what `qtune tune --json` prints (docs/tune.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace qtune::report {

// REQUIRES: `result` is an object with a "table" array (report.cc checks it). `source`
// names the input in the page.
std::string RenderTuneReport(const nlohmann::json& result, const std::string& source);

}  // namespace qtune::report
