#include "report/autotune_report.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "report/html_writer.h"
#include "report/json_fields.h"
#include "report/svg_plot.h"

namespace qtune::report {
namespace {

using nlohmann::json;

std::string Ms(std::optional<double> v) { return v ? FormatNumber(*v) : "-"; }
std::string Ms(double v) { return std::isfinite(v) ? FormatNumber(v) : "-"; }

// One measurement on the progress plot, from the state log or from the report.
struct ProgressRow {
  int index = 0;                  // 1-based measurement number
  std::optional<double> seconds;  // since the first measurement
  std::string pattern, scheme;
  bool ok = false;
  double candidate_ms = NAN;
  double reference_ms = NAN;  // the incumbent (pattern rows), fp32 or rule (baseline, final)
  double best_ms = NAN;       // best placement so far, as measured
  std::string error;
};

// The start placement's latency: the rule-based one or fp32, as the run chose.
double StartLatency(const json& report, double rule_ms, double fp32_ms) {
  return StringField(ObjectField(report, "baseline"), "start") == "fp32" ? fp32_ms : rule_ms;
}

std::vector<ProgressRow> RowsFromLog(const json& report, const AutotuneLog& log) {
  std::vector<ProgressRow> rows;
  double best = NAN;
  for (const LogMeasurement& m : log.measurements) {
    ProgressRow row;
    row.index = static_cast<int>(rows.size()) + 1;
    row.seconds = m.seconds;
    row.pattern = m.pattern;
    row.scheme = m.scheme;
    row.ok = m.ok;
    row.candidate_ms = m.candidate_ms;
    row.reference_ms = m.reference_ms;
    row.error = m.error_kind;
    if (m.ok && m.pattern == "baseline") {
      best = StartLatency(report, m.candidate_ms, m.reference_ms);
    } else if (m.ok && m.pattern != "final" && std::isfinite(m.reference_ms)) {
      best = std::isfinite(best) ? std::min(best, m.reference_ms) : m.reference_ms;
    }
    row.best_ms = best;
    rows.push_back(std::move(row));
  }
  return rows;
}

// Without a state log: the report's measured schemes in search order, no times.
std::vector<ProgressRow> RowsFromReport(const json& report) {
  std::vector<ProgressRow> rows;
  const json& baseline = ObjectField(ObjectField(report, "baseline"), "rule_vs_fp32");
  double best = NAN;
  if (BoolField(baseline, "ok")) {
    ProgressRow row{1, std::nullopt, "baseline", "", true};
    row.candidate_ms = NumberField(baseline, "candidate_ms").value_or(NAN);
    row.reference_ms = NumberField(baseline, "reference_ms").value_or(NAN);
    best = row.best_ms = StartLatency(report, row.candidate_ms, row.reference_ms);
    rows.push_back(row);
  }
  for (const json& p : ArrayField(report, "patterns")) {
    for (const json& s : ArrayField(p, "schemes")) {
      const std::string status = StringField(s, "status");
      if (status != "measured" && status != "replayed" && status != "failed") continue;
      ProgressRow row{static_cast<int>(rows.size()) + 1, std::nullopt, StringField(p, "id"),
                      StringField(s, "scheme"), status != "failed"};
      row.candidate_ms = NumberField(s, "candidate_ms").value_or(NAN);
      row.reference_ms = NumberField(s, "incumbent_ms").value_or(NAN);
      row.error = StringField(s, "error");
      if (row.ok && std::isfinite(row.reference_ms)) {
        best = std::isfinite(best) ? std::min(best, row.reference_ms) : row.reference_ms;
      }
      row.best_ms = best;
      rows.push_back(row);
    }
  }
  return rows;
}

std::string ProgressPlot(const std::vector<ProgressRow>& rows, bool by_time,
                         const std::string& title) {
  PlotSeries candidates{"candidate placement", PlotSeries::Style::kMarkers, kGrey};
  PlotSeries baselines{"fp32 / rule-based baseline", PlotSeries::Style::kMarkers, kPurple};
  PlotSeries best{"best so far", PlotSeries::Style::kStep, kBlue};
  PlotSeries final_model{"final model", PlotSeries::Style::kMarkers, kAmber};
  bool final_done = false;
  for (const ProgressRow& r : rows) {
    const double x = by_time ? (r.seconds ? *r.seconds : NAN) : r.index;
    if (!r.ok) continue;
    if (r.pattern == "baseline") {
      baselines.points.push_back(
          {x, r.candidate_ms, "rule-based: " + Ms(r.candidate_ms) + " ms", "rule"});
      baselines.points.push_back(
          {x, r.reference_ms, "fp32: " + Ms(r.reference_ms) + " ms", "fp32"});
    } else if (r.pattern == "final") {
      if (!final_done) {
        final_model.points.push_back(
            {x, r.candidate_ms, "final model: " + Ms(r.candidate_ms) + " ms", "final", true});
      }
      final_done = true;
    } else {
      candidates.points.push_back(
          {x, r.candidate_ms,
           fmt::format("#{} pattern {} scheme {}: {} ms (best placement then {} ms)", r.index,
                       r.pattern, r.scheme, Ms(r.candidate_ms), Ms(r.reference_ms))});
    }
    if (std::isfinite(r.best_ms) && r.pattern != "final") {
      best.points.push_back({x, r.best_ms});
    }
  }
  XyPlotOptions o;
  o.title = title;
  o.x_label = by_time ? "time since the first measurement (s)" : "measurement";
  o.y_label = "latency (ms)";
  o.x_from_zero = by_time;
  return XyPlotSvg({candidates, baselines, best, final_model}, o);
}

HtmlTable ProgressTable(const std::vector<ProgressRow>& rows) {
  HtmlTable t;
  t.header = {"#",      "time (s)",     "pattern",      "scheme",
              "result", "candidate ms", "reference ms", "best so far ms"};
  t.numeric = {true, true, false, false, false, true, true, true};
  for (const ProgressRow& r : rows) {
    std::string reference = Ms(r.reference_ms);
    if (r.pattern == "baseline") reference += " (fp32)";
    t.rows.push_back({std::to_string(r.index), r.seconds ? fmt::format("{:.3f}", *r.seconds) : "-",
                      r.pattern, r.scheme, r.ok ? "ok" : "failed: " + r.error,
                      Ms(r.candidate_ms) + (r.pattern == "baseline" ? " (rule)" : ""), reference,
                      Ms(r.best_ms)});
  }
  return t;
}

void PatternSection(HtmlPage& page, const json& p) {
  const std::string id = StringField(p, "id");
  const std::string chosen = StringField(p, "best_scheme");
  page.Paragraph(
      fmt::format("Pattern {}: {} region(s), {} node(s), {} insertion point(s); "
                  "chosen scheme {}.",
                  id, Ms(NumberField(p, "regions")), Ms(NumberField(p, "nodes")),
                  Ms(NumberField(p, "points")), chosen.empty() ? "-" : chosen));
  page.Note("Signature: " + StringField(p, "signature"));
  // The placement in force when the pattern's search began, measured alongside its first
  // candidate: what an unmeasured scheme equal to it costs.
  std::optional<double> start_ms;
  for (const json& s : ArrayField(p, "schemes")) {
    if (auto v = NumberField(s, "incumbent_ms"); v && !start_ms) start_ms = v;
  }
  std::vector<Bar> bars;
  HtmlTable t;
  t.header = {"scheme", "status", "candidate ms", "incumbent ms",
              "ratio",  "noise",  "adopted",      "note"};
  t.numeric = {false, false, true, true, true, true, false, false};
  for (const json& s : ArrayField(p, "schemes")) {
    const std::string scheme = StringField(s, "scheme");
    const std::string status = StringField(s, "status");
    const bool is_chosen = scheme == chosen;
    Bar bar{scheme, NumberField(s, "candidate_ms"), is_chosen};
    std::string note = StringField(s, "error");
    if (auto sqnr = NumberField(s, "sqnr_db")) note = "SQNR " + FormatNumber(*sqnr) + " dB";
    if (status == "same_placement" && start_ms) {
      bar.value = start_ms;
      bar.note = "start placement (measured alongside)";
    } else if (!bar.value) {
      bar.note = status + (note.empty() ? "" : ": " + note);
    }
    if (is_chosen) bar.note += bar.note.empty() ? "chosen" : "; chosen";
    bar.tooltip = "scheme " + scheme + " (" + status + ")";
    bars.push_back(bar);
    t.rows.push_back(
        {scheme, status, Ms(NumberField(s, "candidate_ms")), Ms(NumberField(s, "incumbent_ms")),
         Ms(NumberField(s, "ratio")), Ms(NumberField(s, "noise")),
         s.contains("adopted") ? (BoolField(s, "adopted") ? "yes" : "no") : "-", note});
    t.highlight.push_back(is_chosen);
  }
  BarChartOptions o;
  o.title = "Pattern " + id + ": latency of each scheme";
  o.value_label = "latency of the whole model with the scheme (ms)";
  page.Figure(BarChartSvg(bars, o));
  page.Table(t);
}

}  // namespace

std::string RenderAutotuneReport(const json& report, const AutotuneLog* log,
                                 const std::string& source, const std::string& log_note) {
  const json& baseline = ObjectField(report, "baseline");
  const json& final_json = ObjectField(report, "final");
  const json& counts = ObjectField(report, "counts");
  HtmlPage page("qtune autotune report",
                {"source: " + source, "model: " + StringField(report, "model")});
  page.Facts({
      {"tuned model", StringField(report, "output")},
      {"mode / threads / seed",
       fmt::format("{} / {} / {}", StringField(report, "mode"), Ms(NumberField(report, "threads")),
                   Ms(NumberField(report, "seed")))},
      {"benchmark", StringField(report, "benchmark")},
      {"fp32 latency", Ms(NumberField(baseline, "fp32_ms")) + " ms"},
      {"rule-based latency", Ms(NumberField(baseline, "rule_ms")) + " ms (" +
                                 Ms(NumberField(baseline, "rule_points")) + " points)"},
      {"search started from", StringField(baseline, "start")},
      {"final latency", Ms(NumberField(final_json, "latency_ms")) + " ms"},
      {"speedup vs fp32", Ms(NumberField(final_json, "speedup_vs_fp32")) + "x"},
      {"speedup vs rule-based",
       Ms(NumberField(final_json, "speedup_vs_rule")) + "x" +
           (BoolField(final_json, "guard_reverted") ? " (guard: the start placement was kept)"
                                                    : "")},
      {"measurements",
       fmt::format("{} measured, {} replayed, {} failed", Ms(NumberField(counts, "measured")),
                   Ms(NumberField(counts, "replayed")), Ms(NumberField(counts, "failed")))},
      {"elapsed", Ms(NumberField(report, "elapsed_s")) + " s"},
  });

  page.Heading("Search progress");
  std::vector<ProgressRow> rows = log ? RowsFromLog(report, *log) : RowsFromReport(report);
  page.Paragraph(
      "Each grey dot is one candidate placement measured; the blue line is the best placement "
      "so far, as measured alongside each candidate (the baseline the search started from, "
      "then the incumbent).");
  page.Figure(ProgressPlot(rows, /*by_time=*/false, "Best latency against measurements"));
  if (log) {
    page.Figure(ProgressPlot(rows, /*by_time=*/true, "Best latency against time"));
    for (const std::string& w : log->warnings) page.Note(w);
  } else {
    page.Note((log_note.empty() ? std::string("No state log (state.jsonl) beside the report")
                                : log_note) +
              ": no time axis; the measurements follow the report's order.");
  }
  page.Table(ProgressTable(rows));

  page.Heading("Schemes per pattern");
  page.Paragraph(
      "Every scheme tried on each pattern (in search order), the one chosen for "
      "the final model highlighted. Latencies are of the whole model.");
  const json& patterns = ArrayField(report, "patterns");
  if (patterns.empty()) page.Note("The model has no pattern with insertion points.");
  for (const json& p : patterns) PatternSection(page, p);

  const json& combined = ArrayField(report, "combined");
  if (!combined.empty()) {
    page.Heading("Small wins together");
    page.Paragraph(
        "Wins too small to adopt alone, one per pattern, applied at once and measured as one "
        "candidate; then the half with the larger gains (docs/autotune.md, step 6).");
    HtmlTable t;
    t.header = {"patterns", "status", "candidate ms", "incumbent ms", "ratio", "noise", "adopted"};
    t.numeric = {false, false, true, true, true, true, false};
    for (const json& c : combined) {
      t.rows.push_back({StringField(c, "scheme"), StringField(c, "status"),
                        Ms(NumberField(c, "candidate_ms")), Ms(NumberField(c, "incumbent_ms")),
                        Ms(NumberField(c, "ratio")), Ms(NumberField(c, "noise")),
                        c.contains("adopted") ? (BoolField(c, "adopted") ? "yes" : "no") : "-"});
      t.highlight.push_back(c.contains("adopted") && BoolField(c, "adopted"));
    }
    page.Table(t);
  }
  return page.Finish();
}

}  // namespace qtune::report
