#include "quant/conv_weight_blocks.h"

#include <string>

namespace qtune::quant {

ConvWeightShape ConvShapeOf(const std::vector<int64_t>& sizes) {
  ConvWeightShape shape;
  shape.sizes = sizes;
  shape.out = sizes[0];
  shape.in = sizes[1];
  for (size_t d = 2; d < sizes.size(); ++d) shape.spatial *= sizes[d];
  return shape;
}

std::vector<float> ConvWeightToMatrix(const float* w, const ConvWeightShape& shape,
                                      std::span<const float> row_scale) {
  const int64_t o_n = shape.out, i_n = shape.in, s_n = shape.spatial, n = o_n * s_n;
  std::vector<float> m(static_cast<size_t>(i_n * n));
  for (int64_t o = 0; o < o_n; ++o) {
    for (int64_t i = 0; i < i_n; ++i) {
      const float scale = row_scale.empty() ? 1.0f : row_scale[static_cast<size_t>(i)];
      const float* src = w + (o * i_n + i) * s_n;
      float* dst = m.data() + i * n + o * s_n;
      for (int64_t s = 0; s < s_n; ++s) dst[s] = src[s] * scale;
    }
  }
  return m;
}

std::vector<float> DequantizeConvWeight(const QuantizedMatrix& m, const ConvWeightShape& shape,
                                        std::span<const float> row_scale) {
  const int64_t o_n = shape.out, i_n = shape.in, s_n = shape.spatial;
  std::vector<float> w(static_cast<size_t>(o_n * i_n * s_n));
  for (int64_t o = 0; o < o_n; ++o) {
    for (int64_t i = 0; i < i_n; ++i) {
      const float inv = row_scale.empty() ? 1.0f : 1.0f / row_scale[static_cast<size_t>(i)];
      for (int64_t s = 0; s < s_n; ++s) {
        w[static_cast<size_t>((o * i_n + i) * s_n + s)] = m.Dequantize(i, o * s_n + s) * inv;
      }
    }
  }
  return w;
}

StatusOr<DequantizeInputs> ConvDequantizeInputs(const QuantizedMatrix& m,
                                                const ConvWeightShape& shape, bool fp16_scales) {
  // Matrix column c = o * spatial + s; row r = input channel i (codes) or block g (scales).
  const int64_t i_n = shape.in, s_n = shape.spatial, groups = m.k / m.group;
  std::vector<int64_t> scale_sizes = shape.sizes;
  scale_sizes[1] = groups;
  return LayOutDequantizeInputs(
      m, fp16_scales, shape.sizes,
      [&](int64_t i, int64_t c) { return ((c / s_n) * i_n + i) * s_n + c % s_n; }, scale_sizes,
      [&](int64_t g, int64_t c) { return ((c / s_n) * groups + g) * s_n + c % s_n; },
      "conv weights");
}

}  // namespace qtune::quant
