#include "report/quantize_report.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "report/html_writer.h"
#include "report/json_fields.h"
#include "report/svg_plot.h"

namespace qtune::report {
namespace {

using nlohmann::json;

std::string Num(std::optional<double> v) { return v ? FormatNumber(*v) : "-"; }

std::string Strings(const json& array, const char* separator) {
  std::string out;
  for (const json& s : array) {
    if (!s.is_string()) continue;
    if (!out.empty()) out += separator;
    out += s.get<std::string>();
  }
  return out;
}

// The --min-sqnr section: each layer's SQNR with only it quantized, the target as a line.
void SensitivitySection(HtmlPage& page, const json& fallback,
                        const std::set<std::string>& in_float) {
  page.Heading("Per-layer sensitivity");
  const json& sensitivity = ArrayField(fallback, "sensitivity");
  page.Facts({{"target", Num(NumberField(fallback, "target_db")) + " dB"},
              {"SQNR before the fallback", Num(NumberField(fallback, "sqnr_before_db")) + " dB"},
              {"SQNR of the model written", Num(NumberField(fallback, "sqnr_after_db")) + " dB"},
              {"target reached", BoolField(fallback, "reached") ? "yes" : "no"},
              {"layers kept in float", std::to_string(in_float.size())},
              {"measured on", Num(NumberField(fallback, "samples")) + " sample(s) of " +
                                  Strings(ArrayField(fallback, "measured"), ", ")}});
  if (sensitivity.empty()) {
    page.Note("The quantized plan met the target: no layer had to be measured alone.");
    return;
  }
  page.Paragraph(
      "Output SQNR against fp32 with only that layer quantized, most sensitive "
      "first: a short bar is a sensitive layer. Layers kept in float are "
      "highlighted; the dashed line is the target.");
  std::vector<Bar> bars;
  for (const json& s : sensitivity) {
    const std::string node = StringField(s, "node");
    Bar bar{node, NumberField(s, "sqnr_db"), in_float.count(node) > 0};
    if (!bar.value) bar.note = "exact (infinite SQNR)";
    if (bar.highlight) bar.note += bar.note.empty() ? "kept in float" : "; kept in float";
    bar.tooltip = node + " (" + StringField(s, "op") + ")";
    bars.push_back(bar);
  }
  BarChartOptions o;
  o.title = "SQNR with only this layer quantized";
  o.value_label = "output SQNR vs fp32 (dB)";
  o.reference = NumberField(fallback, "target_db");
  o.reference_label = "target";
  page.Figure(BarChartSvg(bars, o));
}

void RangesSection(HtmlPage& page, const json& layers) {
  page.Heading("Calibrated ranges per layer");
  page.Paragraph(
      "The largest calibrated |x| of each quantized layer's activation inputs "
      "(input amax), in graph order; float layers show why they stay float.");
  std::vector<Bar> bars;
  for (const json& layer : layers) {
    Bar bar{StringField(layer, "node"), NumberField(layer, "input_amax")};
    const std::string format = StringField(layer, "format");
    if (!BoolField(layer, "quantized")) {
      bar.value.reset();
      bar.note = "float: " + StringField(layer, "reason");
    } else {
      bar.note = format;
    }
    bar.tooltip = bar.label + " (" + StringField(layer, "op") + ")";
    bars.push_back(bar);
  }
  BarChartOptions o;
  o.title = "Input amax per layer";
  o.value_label = "input amax";
  o.color = kGreen;
  page.Figure(BarChartSvg(bars, o));
}

}  // namespace

std::string RenderQuantizeReport(const json& summary, const std::string& source) {
  const json& layers = ArrayField(summary, "layers");
  const json& fallback = ObjectField(summary, "accuracy_fallback");
  std::set<std::string> in_float;
  for (const json& s : ArrayField(fallback, "layers_in_float")) {
    if (s.is_string()) in_float.insert(s.get<std::string>());
  }
  std::map<std::string, double> sensitivity;
  for (const json& s : ArrayField(fallback, "sensitivity")) {
    if (auto v = NumberField(s, "sqnr_db")) sensitivity[StringField(s, "node")] = *v;
  }
  std::vector<std::string> subtitle = {"source: " + source};
  if (!StringField(summary, "model").empty())
    subtitle.push_back("model: " + StringField(summary, "model"));
  HtmlPage page("qtune quantization report", subtitle);
  std::vector<std::pair<std::string, std::string>> facts = {
      {"output", StringField(summary, "output").empty() ? "-" : StringField(summary, "output")},
      {"recipe / target", StringField(summary, "recipe") + " / " + StringField(summary, "target")},
      {"calibration", StringField(summary, "calibration") +
                          (BoolField(summary, "random_calibration") ? " (random data)" : "")},
      {"layers", Num(NumberField(summary, "quantized_layers")) + " quantized, " +
                     Num(NumberField(summary, "float_layers")) + " float"},
      {"quantizers", Num(NumberField(summary, "enabled_quantizers")) + " enabled, " +
                         Num(NumberField(summary, "disabled_quantizers")) + " disabled"}};
  if (auto before = NumberField(summary, "opset_before")) {
    facts.push_back({"opset", Num(before) + " -> " + Num(NumberField(summary, "opset_after"))});
  }
  page.Facts(facts);
  for (const json& w : ArrayField(summary, "warnings")) {
    if (w.is_string()) page.Note("warning: " + w.get<std::string>());
  }

  if (summary.contains("accuracy_fallback") && summary["accuracy_fallback"].is_object()) {
    SensitivitySection(page, fallback, in_float);
  } else {
    page.Note(
        "No per-layer SQNR in this summary: quantize with --min-sqnr DB to measure each "
        "layer's sensitivity.");
  }
  RangesSection(page, layers);

  page.Heading("Layers");
  HtmlTable t;
  t.header = {"node",       "op",          "quantized",     "format",
              "input amax", "weight amax", "SQNR alone dB", "reason / guards"};
  t.numeric = {false, false, false, false, true, true, true, false};
  for (const json& layer : layers) {
    const std::string node = StringField(layer, "node");
    std::string why = StringField(layer, "reason");
    const std::string guards = Strings(ArrayField(layer, "guard_hits"), "; ");
    if (!guards.empty()) why += (why.empty() ? "" : "; ") + guards;
    auto it = sensitivity.find(node);
    t.rows.push_back({node, StringField(layer, "op"), BoolField(layer, "quantized") ? "yes" : "no",
                      StringField(layer, "format").empty() ? "-" : StringField(layer, "format"),
                      Num(NumberField(layer, "input_amax")), Num(NumberField(layer, "weight_amax")),
                      it == sensitivity.end() ? "-" : FormatNumber(it->second), why});
    t.highlight.push_back(in_float.count(node) > 0);
  }
  page.Table(t);
  return page.Finish();
}

}  // namespace qtune::report
