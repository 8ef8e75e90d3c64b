// Activation-aware scale searches of weight-only quantizers (algorithm: clip or awq).
//
// SearchWeightScales runs the float model on calibration samples and records, for the
// input x (K channels) of every layer whose weight quantizer uses clip or awq:
//   * the mean square of each input channel -> QuantSite::input_mean_square (the clip
//     search weighs each row's error by it: sum_k E[x_k^2] (w - w')^2 is the expected
//     output error when input channels are uncorrelated);
//   * awq: up to max_rows rows of x; then SearchAwqScale picks alpha in {0, 0.1, ..., 1}
//     minimizing ||X W - X diag(1/s) Q(diag(s) W)||^2 with s_k = mean|x_k|^alpha
//     (normalized so that sqrt(max s * min s) = 1) -> QuantSite::input_scale. alpha = 0 is
//     plain RTN, so the search never does worse than RTN on the rows it sees.
// A group = 1 Conv's input x [N, C, H, W] gives per-channel statistics over N, H, W and
// im2col patches as the AWQ rows (conv_awq.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/block_weights.h"
#include "quant/calibration_data.h"
#include "quant/quant_types.h"

namespace qtune::quant {

struct WeightSearchOptions {
  int64_t max_samples = 32;  // calibration samples run
  int64_t max_rows = 128;    // rows of x kept per layer for the AWQ loss
  int threads = 1;
  bool use_onednn = true;
  int alpha_steps = 10;  // alpha grid 0, 1/steps, ..., 1
};

struct AwqResult {
  std::vector<float> scale;  // s, length K
  float alpha = 0.0f;
  double loss = 0.0;      // at the chosen alpha
  double loss_rtn = 0.0;  // at alpha = 0 (s = 1)
};

// The alpha grid of AWQ (SearchAwqScale, and SearchConvAwqScale in conv_awq.h): for alpha
// in {0, 1/steps, ..., 1} the scales s_k = max(mean_abs_k, 1e-4)^alpha, normalized so that
// sqrt(max s * min s) = 1 (alpha = 0: all ones, round to nearest), scored by loss(s); the
// least loss wins (ties: the smaller alpha), alpha 0's loss is loss_rtn.
template <typename Loss>
AwqResult SearchAlphaGrid(std::span<const float> mean_abs, int alpha_steps, Loss loss) {
  AwqResult best;
  best.loss = std::numeric_limits<double>::infinity();
  const int steps = std::max(alpha_steps, 1);
  std::vector<float> s(mean_abs.size());
  for (int step = 0; step <= steps; ++step) {
    const float alpha = static_cast<float>(step) / static_cast<float>(steps);
    float lo = std::numeric_limits<float>::infinity(), hi = 0.0f;
    for (size_t i = 0; i < s.size(); ++i) {
      s[i] = std::pow(std::max(mean_abs[i], 1e-4f), alpha);
      lo = std::min(lo, s[i]);
      hi = std::max(hi, s[i]);
    }
    const float norm = std::sqrt(lo * hi);
    for (float& v : s) v = step == 0 ? 1.0f : v / norm;
    const double l = loss(static_cast<const std::vector<float>&>(s));
    if (step == 0) best.loss_rtn = l;
    if (l < best.loss) {
      best.loss = l;
      best.alpha = alpha;
      best.scale = s;
    }
  }
  return best;
}

// W is K x N with element (k, j) at w[k * row_stride + j * col_stride]; x holds `rows`
// rows of K values; mean_abs has K values. REQUIRES: spec.group divides k.
AwqResult SearchAwqScale(const float* w, int64_t k, int64_t n, int64_t row_stride,
                         int64_t col_stride, std::span<const float> x, int64_t rows,
                         std::span<const float> mean_abs, const MatrixQuantSpec& spec,
                         int alpha_steps);

// Fills input_mean_square (clip, awq) and input_scale (awq) of every enabled weight site
// whose algorithm is clip or awq. Errors name the layer: its input is not computed by the
// model or its last dimension is not K; and the batch of a failing run.
Status SearchWeightScales(const ir::Graph& graph, QuantPlan& plan, CalibrationSource& source,
                          const WeightSearchOptions& options);

}  // namespace qtune::quant
