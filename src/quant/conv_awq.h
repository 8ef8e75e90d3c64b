// Clip and AWQ scale searches on Conv weights (awq.h does MatMul/Gemm). A group = 1 Conv
// with weight W [O, I, kh, kw] and input x [N, I, H, W]:
//   * per input channel i: mean |x_i| and mean x_i^2 over N, H and W (AWQ's s_i and the
//     clip search's row weights);
//   * AWQ's loss rows are im2col patches of x (I * kh * kw values, zero outside the padded
//     input): up to max_rows output positions, spread evenly over each sample; the loss is
//     sum over patches p and output channels o of (p . W_o - p . W'_o)^2 with
//     W' = diag(1/s) Q(diag(s) W) along I (conv_weight_blocks.h).
// Patches are taken for 2-D convs (rank-4 weights); a 1-D or 3-D conv gets no patches,
// so its AWQ search keeps alpha = 0 (RTN) and says so in the log.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"
#include "quant/awq.h"
#include "quant/block_weights.h"

namespace qtune::quant {

// Per-channel sums of one float32 conv input x [N, C, spatial...] into sum_abs / sum_sq
// (size C); returns the number of values per channel added (N * spatial).
int64_t AccumulateChannelStats(const Tensor& x, std::vector<double>& sum_abs,
                               std::vector<double>& sum_sq);

// Appends up to `max_new` im2col patches (C * kh * kw floats each, channel-major) of
// x [N, C, H, W] for `conv` with kernel [kh, kw] to `rows`. Returns how many it added.
int64_t AppendConvPatches(const Tensor& x, const ir::Node& conv, int64_t kh, int64_t kw,
                          int64_t max_new, std::vector<float>& rows);

// W [O, I, S...] (row-major, S = kernel positions); x holds `rows` patches of I * S values.
// REQUIRES: spec.group divides I; mean_abs has I values.
AwqResult SearchConvAwqScale(const Tensor& w, std::span<const float> x, int64_t rows,
                             std::span<const float> mean_abs, const MatrixQuantSpec& spec,
                             int alpha_steps);

}  // namespace qtune::quant
