// Plots as inline SVG markup (no scripts, no external references), for report pages.
// Every text passed in (titles, names, labels, tooltips) is escaped here. Non-finite values
// are never drawn; callers show them in the table under the plot instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace qtune::report {

// Colours of the report's plots (readable on white, distinguishable in grey print).
inline constexpr char kBlue[] = "#0969da";
inline constexpr char kRed[] = "#cf222e";
inline constexpr char kGreen[] = "#1a7f37";
inline constexpr char kPurple[] = "#8250df";
inline constexpr char kAmber[] = "#bf8700";
inline constexpr char kGrey[] = "#8c959f";

struct PlotPoint {
  double x = 0;
  double y = 0;
  std::string tooltip;     // shown on hover (an SVG <title>); may be empty
  std::string label;       // drawn beside the point; may be empty
  bool highlight = false;  // drawn larger, ringed (e.g. the chosen candidate)
};

struct PlotSeries {
  enum class Style { kMarkers, kLine, kStep };
  std::string name;  // legend text
  Style style = Style::kMarkers;
  std::string color = kBlue;
  std::vector<PlotPoint> points;  // drawn in this order; lines join them in this order
};

struct XyPlotOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 900;
  int height = 340;
  bool x_from_zero = false;  // include 0 in the x range
  bool y_from_zero = false;  // include 0 in the y range
};

// A line/scatter plot with axes, ticks, grid and legend. Points with a non-finite
// coordinate are skipped. With no finite point at all, the plot says "no data".
std::string XyPlotSvg(const std::vector<PlotSeries>& series, const XyPlotOptions& options);

struct Bar {
  std::string label;            // category (left of the bar); long ones are shortened
  std::optional<double> value;  // nullopt or non-finite: no bar, only `note`
  bool highlight = false;       // drawn in the highlight colour and marked (e.g. chosen)
  std::string note;             // text after the bar ("chosen", "failed: timeout"); cut to fit
  std::string tooltip;          // full text on hover; the label when empty
};

struct BarChartOptions {
  std::string title;
  std::string value_label;  // the axis under the bars
  std::string color = kBlue;
  std::string highlight_color = kAmber;
  std::optional<double> reference;  // a dashed vertical line (e.g. a target or a baseline)
  std::string reference_label;
  int width = 900;
};

// Horizontal bars, one row per entry, the value axis starting at 0 (or below, for negative
// values).
std::string BarChartSvg(const std::vector<Bar>& bars, const BarChartOptions& options);

// Tick positions covering [lo, hi] with a 1/2/5 x 10^k step, about `target` of them.
std::vector<double> NiceTicks(double lo, double hi, int target);
// A number for a label: up to 4 significant digits, no trailing zeros ("0.0421", "12.5").
std::string FormatNumber(double value);

}  // namespace qtune::report
