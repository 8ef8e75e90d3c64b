// The HTML report of a quantization: the summary `qtune quantize --json` prints
// (docs/formats/summary.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace qtune::report {

// REQUIRES: `summary` is an object with a "layers" array (report.cc checks it). `source`
// names the input in the page.
std::string RenderQuantizeReport(const nlohmann::json& summary, const std::string& source);

}  // namespace qtune::report
