// The HTML report of an autotune run: its report.json (docs/formats/autotune-report.md) and,
// when found, its state log (docs/formats/autotune-state.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/autotune_log.h"

namespace qtune::report {

// REQUIRES: `report` is an object with "format": "qtune-autotune-report" (report.cc checks
// it). `log` may be null (no state log: the progress plot then follows the report's scheme
// order and has no time axis; `log_note`, when set, says why). `source` names the input in
// the page. Missing optional fields show as "-".
std::string RenderAutotuneReport(const nlohmann::json& report, const AutotuneLog* log,
                                 const std::string& source, const std::string& log_note = "");

}  // namespace qtune::report
