// The tune table, as text for the terminal and as JSON for --json and the manifest.
#include <fmt/format.h>

#include <cmath>

#include "tune/tune.h"

namespace qtune::tune {
namespace {

std::string SqnrText(const std::optional<double>& db) {
  if (!db.has_value()) return "-";
  if (std::isinf(*db)) return *db > 0 ? "exact" : "-inf";
  return fmt::format("{:.1f}", *db);
}

nlohmann::json SqnrJson(const std::optional<double>& db) {
  if (!db.has_value() || std::isnan(*db)) return nullptr;
  if (std::isinf(*db)) return *db > 0 ? "inf" : "-inf";
  return *db;
}

}  // namespace

const char* TuneRowStatusName(TuneRow::Status status) {
  switch (status) {
    case TuneRow::Status::kPassed:
      return "pass";
    case TuneRow::Status::kFailed:
      return "fail";
    case TuneRow::Status::kSkipped:
      return "skip";
  }
  return "?";
}

std::string FormatTuneTable(const TuneResult& result) {
  std::string out =
      fmt::format("  {:<14} {:>7} {:>11} {:>11} {:>14} {:>9}  {}\n", "candidate", "threads",
                  "latency_ms", "fp32_ms", "inf/s/core", "SQNR_dB", "result");
  for (const TuneRow& row : result.rows) {
    const bool measured = row.status == TuneRow::Status::kPassed && row.latency_ms > 0;
    std::string verdict = TuneRowStatusName(row.status);
    if (!row.why.empty()) verdict += ": " + row.why;
    out += fmt::format(
        "{} {:<14} {:>7} {:>11} {:>11} {:>14} {:>9}  {}\n", row.chosen ? "*" : " ", row.candidate,
        row.threads, measured ? fmt::format("{:.3f}", row.latency_ms) : "-",
        measured ? fmt::format("{:.3f}", row.fp32_latency_ms) : "-",
        measured ? fmt::format("{:.1f}", row.throughput) : "-", SqnrText(row.sqnr_db), verdict);
  }
  const TuneRow& chosen = result.chosen_row();
  out += fmt::format("chosen: {} with {} thread(s) (strategy {}{})\n", chosen.candidate,
                     chosen.threads, result.strategy,
                     result.strategy_note.empty() ? "" : "; " + result.strategy_note);
  return out;
}

nlohmann::json TuneTableToJson(const TuneResult& result) {
  nlohmann::json rows = nlohmann::json::array();
  for (const TuneRow& row : result.rows) {
    rows.push_back({{"candidate", row.candidate},
                    {"threads", row.threads},
                    {"status", TuneRowStatusName(row.status)},
                    {"why", row.why},
                    {"sqnr_db", SqnrJson(row.sqnr_db)},
                    {"latency_ms", row.latency_ms},
                    {"fp32_latency_ms", row.fp32_latency_ms},
                    {"throughput_per_core", row.throughput},
                    {"replayed", row.replayed},
                    {"chosen", row.chosen}});
  }
  return rows;
}

nlohmann::json TuneResultToJson(const TuneResult& result, const std::string& model_path,
                                const std::string& checkpoint_path) {
  nlohmann::json sizes = nlohmann::json::object();
  for (const auto& [name, dims] : result.input_sizes) sizes[name] = dims;
  const TuneRow& chosen = result.chosen_row();
  return {{"model", model_path},           {"checkpoint", checkpoint_path},
          {"candidate", chosen.candidate}, {"threads", chosen.threads},
          {"strategy", result.strategy},   {"strategy_note", result.strategy_note},
          {"input_sizes", sizes},          {"table", TuneTableToJson(result)}};
}

}  // namespace qtune::tune
