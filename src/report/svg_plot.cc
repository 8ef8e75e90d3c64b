#include "report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/html_writer.h"

namespace qtune::report {
namespace {

constexpr char kFont[] =
    "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\" font-size=\"12\"";
constexpr char kInk[] = "#1f2328";
constexpr char kMuted[] = "#59636e";
constexpr char kGrid[] = "#eaeef2";
constexpr double kCharWidth = 6.6;  // an estimate of one character at 12 px (no text metrics)

std::string Num(double v) { return fmt::format("{:.1f}", v); }

std::string SvgOpen(int width, int height, const std::string& title) {
  return fmt::format(
      "<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" "
      "{}>\n<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n"
      "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"600\" fill=\"{}\">{}</text>\n",
      width, height, width, height, Escape(title), kFont, width, height, kInk, Escape(title));
}

std::string Text(double x, double y, const std::string& text, const char* anchor,
                 const char* color = kMuted, const char* extra = "") {
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" fill=\"{}\"{}>{}</text>\n", Num(x),
                     Num(y), anchor, color, extra, Escape(text));
}

// Cuts `text` to at most `max_chars` bytes on a UTF-8 boundary, ending in "..." when cut.
std::string Shorten(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars || max_chars < 4) return text;
  size_t end = max_chars - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// [lo, hi] widened to cover its ticks; a degenerate range is opened up around its value.
struct Axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
};

Axis MakeAxis(double lo, double hi, bool from_zero, int target) {
  if (from_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (hi - lo <= std::abs(hi) * 1e-9) {
    const double pad = hi == 0 ? 1.0 : std::abs(hi) * 0.1;
    lo = from_zero && lo >= 0 ? 0.0 : lo - pad;
    hi += pad;
  }
  Axis axis;
  axis.ticks = NiceTicks(lo, hi, target);
  axis.lo = std::min(lo, axis.ticks.front());
  axis.hi = std::max(hi, axis.ticks.back());
  return axis;
}

std::string Marker(double x, double y, const PlotPoint& p, const std::string& color, double r) {
  std::string out;
  if (p.highlight) {
    out += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"2\">",
        Num(x), Num(y), Num(r + 3), color, kInk);
  } else {
    out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" fill-opacity=\"0.8\">",
                       Num(x), Num(y), Num(r), color);
  }
  if (!p.tooltip.empty()) out += "<title>" + Escape(p.tooltip) + "</title>";
  return out + "</circle>\n";
}

// A point label's extent: x from x0 to x1, the text's baseline at y (12 px high).
struct LabelBox {
  double x0, x1, y;
};

// The baseline nearest to `y` (tried in 13 px steps, below first) where a label spanning
// [x0, x1] overlaps none of `placed`.
double FreeLabelY(const std::vector<LabelBox>& placed, double x0, double x1, double y) {
  for (int step = 0; step < 40; ++step) {
    const double candidate = y + 13.0 * ((step + 1) / 2) * (step % 2 == 1 ? 1 : -1);
    bool clear = true;
    for (const LabelBox& b : placed) {
      if (x0 < b.x1 && b.x0 < x1 && std::abs(candidate - b.y) < 13) clear = false;
    }
    if (clear) return candidate;
  }
  return y;
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi <= lo || target < 1) return {lo};
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (int i = 0; i < 1000; ++i) {
    const double t = first + i * step;
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string FormatNumber(double value) {
  if (!std::isfinite(value)) return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
  return fmt::format("{:.4g}", value);
}

std::string XyPlotSvg(const std::vector<PlotSeries>& series, const XyPlotOptions& o) {
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x);
      y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
    }
  }
  std::string svg = SvgOpen(o.width, o.height, o.title);
  if (!std::isfinite(x_lo)) {
    svg += Text(o.width / 2.0, o.height / 2.0, "no data", "middle");
    return svg + "</svg>\n";
  }
  const double left = 70, right = 28, top = 48, bottom = 46;
  const double pw = o.width - left - right, ph = o.height - top - bottom;
  const Axis xa = MakeAxis(x_lo, x_hi, o.x_from_zero, 8);
  // A little headroom so that points on the extremes are not cut by the frame.
  const double y_pad = (y_hi - y_lo) * 0.06;
  const Axis ya = MakeAxis(o.y_from_zero ? y_lo : y_lo - y_pad, y_hi + y_pad, o.y_from_zero, 5);
  auto px = [&](double x) { return left + (x - xa.lo) / (xa.hi - xa.lo) * pw; };
  auto py = [&](double y) { return top + ph - (y - ya.lo) / (ya.hi - ya.lo) * ph; };

  for (double t : ya.ticks) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", Num(left),
                       Num(py(t)), Num(left + pw), Num(py(t)), kGrid);
    svg += Text(left - 6, py(t) + 4, FormatNumber(t), "end");
  }
  for (double t : xa.ticks) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n",
                       Num(px(t)), Num(top), Num(px(t)), Num(top + ph), kGrid);
    svg += Text(px(t), top + ph + 16, FormatNumber(t), "middle");
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\"/>\n",
      Num(left), Num(top), Num(pw), Num(ph), kMuted);
  svg += Text(left + pw / 2, o.height - 8, o.x_label, "middle", kInk);
  svg += fmt::format(
      "<text x=\"0\" y=\"0\" transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" "
      "fill=\"{}\">{}</text>\n",
      Num(top + ph / 2), kInk, Escape(o.y_label));

  double legend_x = left;
  for (const PlotSeries& s : series) {
    const double y = 36;
    if (s.style == PlotSeries::Style::kMarkers) {
      svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\n", Num(legend_x + 8),
                         Num(y - 4), s.color);
    } else {
      svg += fmt::format(
          "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"/>\n",
          Num(legend_x), Num(y - 4), Num(legend_x + 16), Num(y - 4), s.color);
    }
    svg += Text(legend_x + 22, y, s.name, "start", kInk);
    legend_x += 22 + s.name.size() * kCharWidth + 18;
  }

  std::vector<LabelBox> placed;  // labels drawn so far, to keep the next ones off them
  for (const PlotSeries& s : series) {
    std::vector<const PlotPoint*> finite;
    for (const PlotPoint& p : s.points) {
      if (std::isfinite(p.x) && std::isfinite(p.y)) finite.push_back(&p);
    }
    if (finite.empty()) continue;
    if (s.style != PlotSeries::Style::kMarkers) {
      std::string d = fmt::format("M{} {}", Num(px(finite[0]->x)), Num(py(finite[0]->y)));
      for (size_t i = 1; i < finite.size(); ++i) {
        if (s.style == PlotSeries::Style::kStep) {
          d += fmt::format(" H{} V{}", Num(px(finite[i]->x)), Num(py(finite[i]->y)));
        } else {
          d += fmt::format(" L{} {}", Num(px(finite[i]->x)), Num(py(finite[i]->y)));
        }
      }
      svg += fmt::format(
          "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\" "
          "stroke-linejoin=\"round\"><title>{}</title></path>\n",
          d, s.color, Escape(s.name));
    }
    for (const PlotPoint* p : finite) {
      const bool marker =
          s.style == PlotSeries::Style::kMarkers || p->highlight || !p->tooltip.empty();
      const double r = s.style == PlotSeries::Style::kMarkers ? 4 : 2.5;
      if (marker) svg += Marker(px(p->x), py(p->y), *p, s.color, r);
      if (!p->label.empty()) {
        const bool right_half = px(p->x) > left + pw * 0.75;
        const double w = p->label.size() * kCharWidth;
        const double x0 = right_half ? px(p->x) - 9 - w : px(p->x) + 9;
        const double y = FreeLabelY(placed, x0, x0 + w, py(p->y) - 7);
        placed.push_back({x0, x0 + w, y});
        svg += Text(right_half ? x0 + w : x0, y, p->label, right_half ? "end" : "start", kInk);
      }
    }
  }
  return svg + "</svg>\n";
}

std::string BarChartSvg(const std::vector<Bar>& bars, const BarChartOptions& o) {
  size_t longest = 4;
  for (const Bar& b : bars) longest = std::max(longest, b.label.size());
  const size_t max_label_chars = 40;
  const double label_w = std::min(longest, max_label_chars) * kCharWidth + 16;
  const double left = 8 + label_w, right = 190, top = 46, row_h = 22, bottom = 42;
  const int height = static_cast<int>(top + row_h * std::max<size_t>(bars.size(), 1) + bottom);
  std::string svg = SvgOpen(o.width, height, o.title);
  double lo = 0, hi = 0;
  bool any = false;
  for (const Bar& b : bars) {
    if (!b.value.has_value() || !std::isfinite(*b.value)) continue;
    lo = std::min(lo, *b.value), hi = std::max(hi, *b.value);
    any = true;
  }
  if (o.reference.has_value() && std::isfinite(*o.reference)) {
    lo = std::min(lo, *o.reference), hi = std::max(hi, *o.reference);
  }
  if (bars.empty()) {
    svg += Text(o.width / 2.0, top + 14, "no data", "middle");
    return svg + "</svg>\n";
  }
  const Axis axis = MakeAxis(lo, hi, /*from_zero=*/true, 6);
  const double pw = o.width - left - right;
  auto px = [&](double v) { return left + (v - axis.lo) / (axis.hi - axis.lo) * pw; };
  const double plot_bottom = top + row_h * bars.size();
  if (any || o.reference.has_value()) {
    for (double t : axis.ticks) {
      svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n",
                         Num(px(t)), Num(top - 4), Num(px(t)), Num(plot_bottom), kGrid);
      svg += Text(px(t), plot_bottom + 15, FormatNumber(t), "middle");
    }
  }
  svg += Text(left + pw / 2, height - 8, o.value_label, "middle", kInk);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = top + row_h * i;
    const std::string tooltip = b.tooltip.empty() ? b.label : b.tooltip;
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\"{}>{}<title>{}"
        "</title></text>\n",
        Num(left - 8), Num(y + 15), kInk, b.highlight ? " font-weight=\"700\"" : "",
        Escape(Shorten(b.label, max_label_chars)), Escape(tooltip));
    std::string after = b.note;
    double text_x = px(0) + 6;
    if (b.value.has_value() && std::isfinite(*b.value)) {
      const double x0 = px(std::min(0.0, *b.value)), x1 = px(std::max(0.0, *b.value));
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" rx=\"2\" fill=\"{}\"{}><title>{}: {}"
          "</title></rect>\n",
          Num(x0), Num(y + 4), Num(std::max(1.0, x1 - x0)),
          b.highlight ? o.highlight_color : o.color,
          b.highlight ? fmt::format(" stroke=\"{}\" stroke-width=\"1.5\"", kInk) : "",
          Escape(tooltip), FormatNumber(*b.value));
      after = FormatNumber(*b.value) + (b.note.empty() ? "" : "  " + b.note);
      text_x = x1 + 6;
    }
    const size_t fits = static_cast<size_t>(std::max(0.0, (o.width - text_x) / kCharWidth));
    svg += Text(text_x, y + 15, Shorten(after, fits), "start", b.highlight ? kInk : kMuted,
                b.highlight ? " font-weight=\"700\"" : "");
  }
  if (o.reference.has_value() && std::isfinite(*o.reference)) {
    const double x = px(*o.reference);
    svg += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" "
        "stroke-dasharray=\"5 4\"/>\n",
        Num(x), Num(top - 6), Num(x), Num(plot_bottom), kRed);
    svg += Text(x + 4, top - 8, o.reference_label, "start", kRed);
  }
  return svg + "</svg>\n";
}

}  // namespace qtune::report
