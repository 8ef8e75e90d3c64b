#include "report/tune_report.h"

#include <fmt/format.h>

#include <cmath>

#include "core/json_limits.h"
#include "report/html_writer.h"
#include "report/json_fields.h"
#include "report/svg_plot.h"

namespace qtune::report {
namespace {

using nlohmann::json;

std::string Num(std::optional<double> v) {
  if (!v) return "-";
  if (std::isinf(*v) && *v > 0) return "exact";
  return FormatNumber(*v);
}

std::string RowName(const json& row) {
  return fmt::format("{} x{}", StringField(row, "candidate"), Num(NumberField(row, "threads")));
}

std::string InputSizes(const json& sizes) {
  std::string out;
  if (!sizes.is_object()) return "-";
  for (const auto& [name, dims] : sizes.items()) {
    if (!out.empty()) out += ", ";
    out += name + " " + (dims.is_array() ? DumpJson(dims) : "?");
  }
  return out.empty() ? "-" : out;
}

// Latency against SQNR, one point per passing row. Exact rows (fp32) have an infinite SQNR;
// they are drawn a little above the best finite SQNR and labelled "exact".
std::string TradeOffPlot(const json& table) {
  double max_sqnr = -INFINITY;
  for (const json& row : table) {
    auto sqnr = NumberField(row, "sqnr_db");
    if (StringField(row, "status") == "pass" && sqnr && std::isfinite(*sqnr)) {
      max_sqnr = std::max(max_sqnr, *sqnr);
    }
  }
  const double exact_y = std::isfinite(max_sqnr) ? max_sqnr + 10 : 100;
  PlotSeries passed{"passing candidate", PlotSeries::Style::kMarkers, kBlue};
  PlotSeries chosen{"chosen", PlotSeries::Style::kMarkers, kAmber};
  for (const json& row : table) {
    if (StringField(row, "status") != "pass") continue;
    auto latency = NumberField(row, "latency_ms");
    auto sqnr = NumberField(row, "sqnr_db");
    if (!latency || !sqnr || std::isnan(*sqnr)) continue;
    const bool exact = std::isinf(*sqnr);
    PlotPoint p{*latency, exact ? exact_y : *sqnr,
                fmt::format("{}: {} ms, SQNR {} dB", RowName(row), Num(latency), Num(sqnr)),
                RowName(row) + (exact ? " (exact)" : "")};
    p.highlight = BoolField(row, "chosen");
    (p.highlight ? chosen : passed).points.push_back(p);
  }
  XyPlotOptions o;
  o.title = "Candidates: latency against accuracy";
  o.x_label = "latency (ms, lower is better)";
  o.y_label = "output SQNR vs fp32 (dB, higher is better)";
  o.x_from_zero = true;
  return XyPlotSvg({passed, chosen}, o);
}

std::string LatencyBars(const json& table) {
  std::vector<Bar> bars;
  std::optional<double> fp32;
  for (const json& row : table) {
    const std::string status = StringField(row, "status");
    Bar bar{RowName(row), std::nullopt, BoolField(row, "chosen")};
    if (status == "pass") {
      bar.value = NumberField(row, "latency_ms");
      if (StringField(row, "candidate") == "fp32" && !fp32) fp32 = bar.value;
    } else {
      bar.note = status + ": " + StringField(row, "why");
    }
    if (bar.highlight) bar.note += bar.note.empty() ? "chosen" : "; chosen";
    bars.push_back(bar);
  }
  BarChartOptions o;
  o.title = "Candidates side by side: latency";
  o.value_label = "latency (ms)";
  o.reference = fp32;
  o.reference_label = "fp32";
  return BarChartSvg(bars, o);
}

}  // namespace

std::string TuneRowName(const json& row) { return RowName(row); }

std::string TuneInputSizes(const json& sizes) { return InputSizes(sizes); }

void AddTuneSections(HtmlPage& page, const json& table) {
  page.Heading("Latency against accuracy");
  page.Paragraph(
      "Each passing candidate at each thread count: its latency and its output "
      "SQNR against fp32. Up and to the left is better; the chosen one is ringed.");
  page.Figure(TradeOffPlot(table));
  page.Heading("Candidates side by side");
  page.Figure(LatencyBars(table));

  HtmlTable t;
  t.header = {"candidate",  "threads", "latency ms", "fp32 ms (same rounds)",
              "inf/s/core", "SQNR dB", "result"};
  t.numeric = {false, true, true, true, true, true, false};
  for (const json& row : table) {
    const std::string status = StringField(row, "status");
    const bool passed = status == "pass";
    const std::string why = StringField(row, "why");
    t.rows.push_back(
        {StringField(row, "candidate"), Num(NumberField(row, "threads")),
         passed ? Num(NumberField(row, "latency_ms")) : "-",
         passed ? Num(NumberField(row, "fp32_latency_ms")) : "-",
         passed ? fmt::format("{:.1f}", NumberField(row, "throughput_per_core").value_or(0)) : "-",
         Num(NumberField(row, "sqnr_db")), status + (why.empty() ? "" : ": " + why)});
    t.highlight.push_back(BoolField(row, "chosen"));
  }
  page.Table(t);
}

std::string RenderTuneReport(const json& result, const std::string& source) {
  const json& table = ArrayField(result, "table");
  HtmlPage page("qtune tune report",
                {"source: " + source, "model: " + StringField(result, "model")});
  std::string chosen = "-";
  for (const json& row : table) {
    if (BoolField(row, "chosen")) chosen = RowName(row) + " thread(s)";
  }
  const std::string note = StringField(result, "strategy_note");
  page.Facts(
      {{"chosen", chosen},
       {"strategy", StringField(result, "strategy") + (note.empty() ? "" : " (" + note + ")")},
       {"checkpoint", StringField(result, "checkpoint")},
       {"measured input sizes", InputSizes(ObjectField(result, "input_sizes"))}});
  AddTuneSections(page, table);
  return page.Finish();
}

}  // namespace qtune::report
