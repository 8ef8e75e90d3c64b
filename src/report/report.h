// `qtune report`: one self-contained HTML page (inline CSS and SVG, no scripts, no network)
// from what autotune, tune and quantize write (docs/report.md).
//
//   auto kind = report::WriteReport("work/", "report.html");   // detects the input's kind
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"

namespace qtune::report {

enum class ReportKind { kAutotune, kTune, kQuantize };
const char* ReportKindName(ReportKind kind);  // "autotune", "tune", "quantize"

struct ReportInput {
  ReportKind kind = ReportKind::kAutotune;
  std::string source;     // the path given
  nlohmann::json data;    // report.json, the tune result or the quantize summary
  std::string state_log;  // autotune: the state log beside report.json; empty when none
};

// Reads and identifies `path`:
//   - a folder holding report.json (an autotune work dir, with its state.jsonl);
//   - a JSON file: an autotune report.json ("format": "qtune-autotune-report"), a
//     `qtune tune --json` result ("table" array) or a `qtune quantize --json` summary
//     ("layers" array).
// Errors name the path: NotFound (missing), DataLoss (not JSON), InvalidArgument (JSON of
// another kind: says which inputs are accepted), Unimplemented (a newer format version).
StatusOr<ReportInput> LoadReportInput(const std::string& path);

// The page for `input` (reads the state log, if any; a damaged one becomes a note).
StatusOr<std::string> RenderReport(const ReportInput& input);

// LoadReportInput + RenderReport, written to `output_path` atomically.
StatusOr<ReportKind> WriteReport(const std::string& input_path, const std::string& output_path);

// For `qtune tune`, which holds its result in memory: renders `tune_result` (what
// `tune --json` prints) to `output_path`.
Status WriteTuneReport(const nlohmann::json& tune_result, const std::string& output_path);

}  // namespace qtune::report
