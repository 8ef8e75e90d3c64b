// Block formats on Conv weights: a Conv weight W [O, I, k...] (I: input channels per
// group) is blocked along its axis 1, so inside each group: one scale per `block_size`
// input channels for each output channel and kernel position. The int4/int8 rounding
// (block_weights.h) works on K x N matrices blocked along K, so a Conv weight is seen as
// the matrix
//
//   M [K = I][N = O * S]   with M[i][o * S + s] = W[o][i][s]   (S = prod k..., s the
//                                                               flattened kernel position)
//
// and its codes and scales go back to the weight's layout for
// DequantizeLinear(axis = 1, block_size): codes [O, I, k...], scales [O, I / block, k...].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "quant/block_weights.h"

namespace qtune::quant {

struct ConvWeightShape {
  int64_t out = 0, in = 0, spatial = 1;  // O, I, S
  std::vector<int64_t> sizes;            // the weight's sizes
};

// REQUIRES: sizes.size() >= 3.
ConvWeightShape ConvShapeOf(const std::vector<int64_t>& sizes);

// M (row-major [I][O * S]) of weight data `w`; row i times row_scale[i] when row_scale is
// not empty (AWQ's diag(s) W).
std::vector<float> ConvWeightToMatrix(const float* w, const ConvWeightShape& shape,
                                      std::span<const float> row_scale);

// The dequantized weight in W's layout [O, I, S], row i divided by row_scale[i] when not
// empty (AWQ's W' = diag(1/s) Q(diag(s) W)).
std::vector<float> DequantizeConvWeight(const QuantizedMatrix& m, const ConvWeightShape& shape,
                                        std::span<const float> row_scale);

// The inputs of DequantizeLinear(axis = 1, block_size = m.group) in W's layout: codes
// INT4 / UINT4 / INT8 / UINT8 [O, I, k...], scales float32 (float16) and zero points
// [O, I / group, k...]. REQUIRES: m is the matrix of a weight of `shape`.
StatusOr<DequantizeInputs> ConvDequantizeInputs(const QuantizedMatrix& m,
                                                const ConvWeightShape& shape, bool fp16_scales);

}  // namespace qtune::quant
