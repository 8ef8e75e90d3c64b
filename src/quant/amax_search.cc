#include "quant/amax_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace qtune::quant {
namespace {

constexpr int kMseCoarseCandidates = 512;
constexpr int kMseFineCandidates = 64;
constexpr int kMsePointsPerBin = 4;

double Clamp(double amax, const AbsHistogram& histogram) {
  return std::clamp(amax, 0.0, static_cast<double>(histogram.max_abs()));
}

// Nearest float8 e4m3fn value to `value` (>= 0), round half to even, saturating at 448.
double RoundToE4M3(double value) {
  constexpr double kMax = 448.0;
  if (value >= kMax) return kMax;
  int exponent = 0;
  std::frexp(value, &exponent);        // value in [2^(exponent-1), 2^exponent)
  int e = std::max(exponent - 1, -6);  // subnormals share the step of the smallest normal
  double step = std::ldexp(1.0, e - 3);
  return std::min(std::nearbyint(value / step) * step, kMax);
}

// The (unnormalized) points and weights MseAmax evaluates: kMsePointsPerBin per used bin.
struct Points {
  std::vector<double> x;
  std::vector<double> weight;
};

Points MsePoints(const AbsHistogram& histogram) {
  Points points;
  const double width = histogram.bin_width();
  const auto& counts = histogram.counts();
  for (int b = 0; b < histogram.used_bins(); ++b) {
    if (counts[b] == 0) continue;
    for (int k = 0; k < kMsePointsPerBin; ++k) {
      double x = (b + (k + 0.5) / kMsePointsPerBin) * width;
      points.x.push_back(std::min(x, static_cast<double>(histogram.max_abs())));
      points.weight.push_back(static_cast<double>(counts[b]) / kMsePointsPerBin);
    }
  }
  return points;
}

double SquaredError(const Points& points, double amax, QuantFormat format) {
  double sum = 0.0;
  for (size_t i = 0; i < points.x.size(); ++i) {
    double d = QuantizeDequantize(points.x[i], amax, format) - points.x[i];
    sum += points.weight[i] * d * d;
  }
  return sum;
}

}  // namespace

double QuantizeDequantize(double value, double amax, QuantFormat format) {
  if (format == QuantFormat::kFp8E4M3) {
    double scale = amax / 448.0;
    return RoundToE4M3(value / scale) * scale;
  }
  double scale = amax / 127.0;
  return std::min(std::nearbyint(value / scale), 127.0) * scale;
}

double PercentileAmax(const AbsHistogram& histogram, double percentile) {
  if (histogram.total() == 0 || histogram.max_abs() == 0.0f) return 0.0;
  const double target =
      std::clamp(percentile, 0.0, 100.0) / 100.0 * static_cast<double>(histogram.total());
  double cumulative = static_cast<double>(histogram.zeros());
  if (cumulative >= target) return 0.0;
  const auto& counts = histogram.counts();
  for (int b = 0; b < histogram.num_bins(); ++b) {
    if (counts[b] == 0) continue;
    double c = static_cast<double>(counts[b]);
    if (cumulative + c >= target) {
      double fraction = (target - cumulative) / c;
      return Clamp((b + fraction) * histogram.bin_width(), histogram);
    }
    cumulative += c;
  }
  return histogram.max_abs();
}

double EntropyAmax(const AbsHistogram& histogram, int levels, int start_bin) {
  const int stop = histogram.used_bins();
  if (stop <= start_bin || levels < 1) return histogram.max_abs();
  std::vector<double> bins(histogram.counts().begin(), histogram.counts().begin() + stop);
  bins[0] = bins[1];
  double total = 0.0;
  for (double c : bins) total += c;
  // suffix[i] = sum of bins[i..stop)
  std::vector<double> suffix(stop + 1, 0.0);
  for (int i = stop - 1; i >= 0; --i) suffix[i] = suffix[i + 1] + bins[i];

  std::vector<double> group_mass(levels), group_nonzero(levels);
  double best_divergence = std::numeric_limits<double>::infinity();
  int best_edge = stop;
  for (int i = start_bin; i <= stop; ++i) {
    // Q: fold [0, i) into `levels` groups; bin j belongs to group floor(j * levels / i).
    std::fill(group_mass.begin(), group_mass.end(), 0.0);
    std::fill(group_nonzero.begin(), group_nonzero.end(), 0.0);
    for (int j = 0; j < i; ++j) {
      if (bins[j] == 0.0) continue;
      int g = static_cast<int>(static_cast<int64_t>(j) * levels / i);
      group_mass[g] += bins[j];
      group_nonzero[g] += 1.0;
    }
    const double q_total = total - suffix[i];  // Q keeps the in-range mass
    if (q_total <= 0.0) continue;
    double divergence = 0.0;
    for (int j = 0; j < i; ++j) {
      double p = bins[j];
      if (j == i - 1) p += suffix[i];  // the clipped tail lands in the last bin
      if (p == 0.0) continue;
      double q = 0.0;
      if (bins[j] != 0.0) {
        int g = static_cast<int>(static_cast<int64_t>(j) * levels / i);
        q = group_mass[g] / group_nonzero[g];
      }
      if (q == 0.0) {
        divergence = std::numeric_limits<double>::infinity();
        break;
      }
      double pn = p / total;
      divergence += pn * std::log(pn / (q / q_total));
    }
    if (divergence <= best_divergence) {  // "<=": ties go to the larger edge
      best_divergence = divergence;
      best_edge = i;
    }
  }
  return Clamp(best_edge * histogram.bin_width(), histogram);
}

double MseAmax(const AbsHistogram& histogram, QuantFormat format) {
  const double max_abs = histogram.max_abs();
  if (histogram.used_bins() == 0 || max_abs == 0.0) return 0.0;
  const Points points = MsePoints(histogram);
  auto search = [&](double lo, double hi, int steps) {
    double best_amax = hi;
    double best_error = std::numeric_limits<double>::infinity();
    for (int k = 1; k <= steps; ++k) {
      double amax = lo + (hi - lo) * k / steps;
      if (amax <= 0.0) continue;
      double error = SquaredError(points, amax, format);
      if (error < best_error) {
        best_error = error;
        best_amax = amax;
      }
    }
    return best_amax;
  };
  const double step = max_abs / kMseCoarseCandidates;
  double coarse = search(0.0, max_abs, kMseCoarseCandidates);
  double fine =
      search(std::max(coarse - step, 0.0), std::min(coarse + step, max_abs), kMseFineCandidates);
  // The fine grid's first point is just above coarse - step; compare against coarse too.
  if (SquaredError(points, coarse, format) <= SquaredError(points, fine, format)) return coarse;
  return fine;
}

}  // namespace qtune::quant
