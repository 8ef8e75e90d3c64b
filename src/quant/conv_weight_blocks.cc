#include "quant/conv_weight_blocks.h"

#include <string>

#include "core/float_convert.h"

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
  const DataType code_type = m.bits == 4 ? (m.symmetric ? DataType::kInt4 : DataType::kUint4)
                                         : (m.symmetric ? DataType::kInt8 : DataType::kUint8);
  const int64_t o_n = shape.out, i_n = shape.in, s_n = shape.spatial, n = m.n;
  const int64_t groups = m.k / m.group;
  DequantizeInputs out;
  auto data = Tensor::Allocate(code_type, shape.sizes);
  if (!data.ok()) {
    return data.status().WithContext(std::string("storing ") +
                                     std::string(DataTypeName(code_type)) + " conv weights");
  }
  out.data = std::move(data).value();
  // Held unpacked, one element per byte (core/dtype.h); files pack 4-bit types.
  auto* bytes = static_cast<int8_t*>(out.data.raw_data());
  for (int64_t o = 0; o < o_n; ++o) {
    for (int64_t i = 0; i < i_n; ++i) {
      for (int64_t s = 0; s < s_n; ++s) {
        bytes[(o * i_n + i) * s_n + s] = m.codes[static_cast<size_t>(i * n + o * s_n + s)];
      }
    }
  }
  std::vector<int64_t> scale_sizes = shape.sizes;
  scale_sizes[1] = groups;
  ASSIGN_OR_RETURN(
      out.scale,
      Tensor::Allocate(fp16_scales ? DataType::kFloat16 : DataType::kFloat32, scale_sizes));
  if (!m.symmetric) {
    ASSIGN_OR_RETURN(
        out.zero_point,
        Tensor::Allocate(m.bits == 4 ? DataType::kUint4 : DataType::kUint8, scale_sizes));
  }
  for (int64_t o = 0; o < o_n; ++o) {
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t s = 0; s < s_n; ++s) {
        const size_t src = static_cast<size_t>(g * n + o * s_n + s);
        const int64_t dst = (o * groups + g) * s_n + s;
        if (fp16_scales) {
          out.scale.data<uint16_t>()[dst] = FloatToHalf(m.scales[src]);
        } else {
          out.scale.data<float>()[dst] = m.scales[src];
        }
        if (!m.symmetric) {
          static_cast<uint8_t*>(out.zero_point.raw_data())[dst] = m.zero_points[src];
        }
      }
    }
  }
  return out;
}

}  // namespace qtune::quant
