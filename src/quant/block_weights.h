// Weight-only quantization of one Gemm/MatMul weight, viewed as a K x N matrix (K the
// reduction axis): int4 or int8 codes with one scale (and, asymmetric, one zero point) per
// group of `group` consecutive elements along K in each output column. group = K is per
// output channel; group = block_size is blockwise (DequantizeLinear's block_size).
//
// Rounding (pinned by tests/quant/block_weights_test.cc):
//   symmetric    scale = amax / qmax (int4: 7, int8: 127); q = clamp(rne(w / scale),
//                -qmax, qmax); INT4 / INT8 codes; dequantized w' = q * scale
//   asymmetric   lo = min(min, 0), hi = max(max, 0); scale = (hi - lo) / (2^bits - 1);
//                zp = clamp(rne(-lo / scale), 0, 2^bits - 1); q = clamp(rne(w / scale) + zp,
//                0, 2^bits - 1); UINT4 / UINT8 codes; w' = (q - zp) * scale
//   rne: round half to even (QuantizeLinear's rounding). With fp16 scales the scale is
//   rounded to float16 first and the codes use the rounded scale, so w' is exactly what
//   DequantizeLinear computes. A group that is all zero gets scale 1 (codes 0); scales are
//   never below kMinBlockScale (fp16: float16's smallest normal).
// Algorithms (quant_types.h WeightAlgorithm): kRtn as above; kClip tries the range times
// 1.0, 0.95, ..., 0.5 per group and keeps the one with the least output error
// sum_k c_k (w - w')^2 (c_k: the input channel's mean square, or 1); kAwq is applied by
// the caller (awq.h) as a row scaling of W before quantizing, then RTN.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/float_convert.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/quant_types.h"

namespace qtune::quant {

inline constexpr float kMinBlockScale = 1e-8f;

struct MatrixQuantSpec {
  int bits = 4;           // 4 or 8
  bool symmetric = true;  // false: unsigned codes with zero points
  int64_t group = 64;     // elements per scale along K; K % group == 0
  bool fp16_scales = false;
  bool clip_search = false;
  std::span<const float> channel_weight;  // clip: c_k per row k (size K), empty = all 1
};

// A quantized K x N matrix.
struct QuantizedMatrix {
  int64_t k = 0, n = 0, group = 0;
  int bits = 4;
  bool symmetric = true;
  std::vector<int8_t> codes;         // [K][N], row-major; asymmetric: the unsigned code
  std::vector<float> scales;         // [K / group][N] (already float16-rounded if asked)
  std::vector<uint8_t> zero_points;  // [K / group][N]; asymmetric only
  // Dequantized value of element (row, col).
  float Dequantize(int64_t row, int64_t col) const;
};

// `w` holds the matrix with element (row k, col j) at w[k * row_stride + j * col_stride]
// (a MatMul B [K, N]: row_stride N, col_stride 1; a Gemm transB B [N, K]: 1 and K).
// REQUIRES: bits 4 or 8; group > 0 divides k; channel_weight empty or of size k.
QuantizedMatrix QuantizeMatrix(const float* w, int64_t k, int64_t n, int64_t row_stride,
                               int64_t col_stride, const MatrixQuantSpec& spec);

// Two 4-bit codes per byte, ONNX order: element 2i in the low nibble, 2i+1 in the high
// one; an odd count leaves the last high nibble 0. Codes are taken modulo 16 (two's
// complement for INT4).
std::vector<uint8_t> PackNibbles(std::span<const int8_t> codes);

// The matrix's codes in the weight's own layout (the initializer's sizes, `transposed`:
// the weight is [N, K]), as an INT4 / UINT4 (bits 4) or INT8 / UINT8 tensor, and the scales
// [K / group, N] (or [N, K / group] transposed) as float32 or float16 -- the inputs of a
// DequantizeLinear with axis = the reduction axis and block_size = group. Per channel
// (group == k) the scale and zero point are 1-D [N] for DequantizeLinear's axis = the
// output axis. Errors: a 4-bit tensor the core Tensor cannot hold (Unimplemented).
struct DequantizeInputs {
  Tensor data, scale, zero_point;  // zero_point invalid when symmetric
};
StatusOr<DequantizeInputs> ToDequantizeInputs(const QuantizedMatrix& m, bool transposed,
                                              bool fp16_scales);

// The layout step ToDequantizeInputs and ConvDequantizeInputs (conv_weight_blocks.h) share:
// code (r, c) of the K x N matrix goes to element code_at(r, c) of a tensor of `data_sizes`;
// the scale and zero point of block g, column c to element scale_at(g, c) of tensors of
// `scale_sizes`. `what` names the weights in an allocation error.
template <typename CodeAt, typename ScaleAt>
StatusOr<DequantizeInputs> LayOutDequantizeInputs(const QuantizedMatrix& m, bool fp16_scales,
                                                  const std::vector<int64_t>& data_sizes,
                                                  CodeAt code_at,
                                                  const std::vector<int64_t>& scale_sizes,
                                                  ScaleAt scale_at, const char* what) {
  const DataType code_type = m.bits == 4 ? (m.symmetric ? DataType::kInt4 : DataType::kUint4)
                                         : (m.symmetric ? DataType::kInt8 : DataType::kUint8);
  DequantizeInputs out;
  auto data = Tensor::Allocate(code_type, data_sizes);
  if (!data.ok()) {
    return data.status().WithContext(std::string("storing ") +
                                     std::string(DataTypeName(code_type)) + " " + what);
  }
  out.data = std::move(data).value();
  // Held unpacked, one element per byte (core/dtype.h); files pack 4-bit types.
  auto* bytes = static_cast<int8_t*>(out.data.raw_data());
  for (int64_t r = 0; r < m.k; ++r) {
    for (int64_t c = 0; c < m.n; ++c)
      bytes[code_at(r, c)] = m.codes[static_cast<size_t>(r * m.n + c)];
  }
  ASSIGN_OR_RETURN(
      out.scale,
      Tensor::Allocate(fp16_scales ? DataType::kFloat16 : DataType::kFloat32, scale_sizes));
  if (!m.symmetric) {
    ASSIGN_OR_RETURN(
        out.zero_point,
        Tensor::Allocate(m.bits == 4 ? DataType::kUint4 : DataType::kUint8, scale_sizes));
  }
  for (int64_t g = 0; g < m.k / m.group; ++g) {
    for (int64_t c = 0; c < m.n; ++c) {
      const size_t src = static_cast<size_t>(g * m.n + c);
      const int64_t dst = scale_at(g, c);
      if (fp16_scales) {
        out.scale.data<uint16_t>()[dst] = FloatToHalf(m.scales[src]);
      } else {
        out.scale.data<float>()[dst] = m.scales[src];
      }
      if (!m.symmetric) static_cast<uint8_t*>(out.zero_point.raw_data())[dst] = m.zero_points[src];
    }
  }
  return out;
}

}  // namespace qtune::quant
