// The HTML report of a tune result: what `qtune tune --json` prints (docs/tune.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/html_writer.h"

namespace qtune::report {

// REQUIRES: `result` is an object with a "table" array (report.cc checks it). `source`
// names the input in the page.
std::string RenderTuneReport(const nlohmann::json& result, const std::string& source);

// The tune table's sections (the latency/accuracy plot, the latency bars and the table),
// appended to `page`. `table` is a tune table (TuneTableToJson); the checkpoint report
// (checkpoint_report.h) draws the copy its manifest holds with this too.
void AddTuneSections(HtmlPage& page, const nlohmann::json& table);

// "<candidate> x<threads>" of a table row, and "name [d0,...], ..." of input sizes.
std::string TuneRowName(const nlohmann::json& row);
std::string TuneInputSizes(const nlohmann::json& sizes);

}  // namespace qtune::report
