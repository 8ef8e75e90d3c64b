#include "core/block_float.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/float_convert.h"

namespace qtune {
namespace {

constexpr float kE2M1Max = 6.0f;
constexpr float kE4M3Max = 448.0f;

float AbsMax(std::span<const float> values) {
  float amax = 0.0f;
  for (float v : values) amax = std::max(amax, std::fabs(v));
  return amax;
}

// A row-major tensor seen as [outer, axis, inner] with blocks of `block` along the axis.
struct BlockLayout {
  int64_t outer = 1, axis_size = 1, inner = 1, block = 1, blocks = 1;

  BlockLayout(const std::vector<int64_t>& sizes, int64_t axis, int64_t block_size)
      : block(block_size) {
    for (int64_t d = 0; d < axis; ++d) outer *= sizes[d];
    axis_size = sizes[axis];
    for (size_t d = axis + 1; d < sizes.size(); ++d) inner *= sizes[d];
    blocks = (axis_size + block - 1) / block;
  }
  int64_t Element(int64_t o, int64_t a, int64_t i) const { return (o * axis_size + a) * inner + i; }
  int64_t Scale(int64_t o, int64_t b, int64_t i) const { return (o * blocks + b) * inner + i; }
};

Status CheckInput(const Tensor& x, int64_t axis, const char* format) {
  if (x.dtype() != DataType::kFloat32) {
    return InvalidArgumentError(std::string(format) + " quantizes float32, not " + x.DebugString());
  }
  if (axis < 0 || axis >= static_cast<int64_t>(x.rank())) {
    return InvalidArgumentError(std::string(format) + ": axis " + std::to_string(axis) +
                                " is out of range for " + x.DebugString());
  }
  const float* data = x.data<float>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (!std::isfinite(data[i])) {
      return InvalidArgumentError(std::string(format) + ": element " + std::to_string(i) + " is " +
                                  std::to_string(data[i]) + "; weights must be finite");
    }
  }
  return Status::Ok();
}

// Runs quantize_block(values, codes) -> scale code over every block of x along `axis`.
template <typename QuantizeBlock>
StatusOr<BlockQuantized> QuantizeBlocks(const Tensor& x, int64_t axis, int64_t block,
                                        DataType value_type, DataType scale_type,
                                        QuantizeBlock&& quantize_block) {
  const BlockLayout layout(x.sizes(), axis, block);
  std::vector<int64_t> scale_sizes = x.sizes();
  scale_sizes[axis] = layout.blocks;
  BlockQuantized q{.axis = axis, .block_size = block};
  ASSIGN_OR_RETURN(q.values, Tensor::Allocate(value_type, x.sizes()));
  ASSIGN_OR_RETURN(q.scales, Tensor::Allocate(scale_type, scale_sizes));
  const float* in = x.data<float>();
  uint8_t* values = q.values.data<uint8_t>();
  uint8_t* scales = q.scales.data<uint8_t>();
  std::vector<float> gathered(block);
  std::vector<uint8_t> codes(block);
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t b = 0; b < layout.blocks; ++b) {
      const int64_t begin = b * block;
      const int64_t n = std::min(block, layout.axis_size - begin);
      for (int64_t i = 0; i < layout.inner; ++i) {
        for (int64_t k = 0; k < n; ++k) gathered[k] = in[layout.Element(o, begin + k, i)];
        scales[layout.Scale(o, b, i)] = quantize_block(std::span<const float>(gathered.data(), n),
                                                       std::span<uint8_t>(codes.data(), n));
        for (int64_t k = 0; k < n; ++k) values[layout.Element(o, begin + k, i)] = codes[k];
      }
    }
  }
  return q;
}

}  // namespace

float Nvfp4GlobalScale(float amax) { return amax > 0.0f ? amax / (kE2M1Max * kE4M3Max) : 1.0f; }

uint8_t QuantizeNvfp4Block(std::span<const float> values, float global_scale,
                           std::span<uint8_t> codes) {
  const uint8_t scale_code = FloatToFloat8E4M3FN(AbsMax(values) / kE2M1Max / global_scale);
  const float scale = Float8E4M3FNToFloat(scale_code) * global_scale;
  for (size_t k = 0; k < values.size(); ++k) {
    codes[k] = scale > 0.0f ? FloatToFloat4E2M1(values[k] / scale) : 0;
  }
  return scale_code;
}

uint8_t Mxfp8ScaleCode(float amax) {
  if (!(amax > 0.0f)) return 127;  // 2^0 for an all-zero block
  // amax = m * 2^k with m in [0.5, 1); amax / 448 = (m / 0.875) * 2^(k - 9). The smallest
  // e with amax <= 448 * 2^e is k - 9 when m <= 0.875, else k - 8 (compared exactly).
  int k = 0;
  std::frexp(amax, &k);
  const int e = amax <= std::ldexp(kE4M3Max, k - 9) ? k - 9 : k - 8;
  return static_cast<uint8_t>(std::clamp(e, -127, 127) + 127);
}

uint8_t QuantizeMxfp8Block(std::span<const float> values, std::span<uint8_t> codes) {
  const uint8_t scale_code = Mxfp8ScaleCode(AbsMax(values));
  const int e = static_cast<int>(scale_code) - 127;
  // Dividing by a power of two is exact unless the result leaves float32's normal range;
  // ldexp keeps it exact down to the subnormals.
  for (size_t k = 0; k < values.size(); ++k) {
    codes[k] = FloatToFloat8E4M3FN(std::ldexp(values[k], -e));
  }
  return scale_code;
}

StatusOr<BlockQuantized> QuantizeNvfp4(const Tensor& x, int64_t axis) {
  RETURN_IF_ERROR(CheckInput(x, axis, "NVFP4"));
  const float global = Nvfp4GlobalScale(AbsMax(x.span<float>()));
  ASSIGN_OR_RETURN(
      BlockQuantized q,
      QuantizeBlocks(x, axis, kNvfp4BlockSize, DataType::kFloat4E2M1, DataType::kFloat8E4M3FN,
                     [&](std::span<const float> v, std::span<uint8_t> c) {
                       return QuantizeNvfp4Block(v, global, c);
                     }));
  q.global_scale = global;
  return q;
}

StatusOr<BlockQuantized> QuantizeMxfp8(const Tensor& x, int64_t axis) {
  RETURN_IF_ERROR(CheckInput(x, axis, "MXFP8"));
  return QuantizeBlocks(
      x, axis, kMxfp8BlockSize, DataType::kFloat8E4M3FN, DataType::kFloat8E8M0,
      [](std::span<const float> v, std::span<uint8_t> c) { return QuantizeMxfp8Block(v, c); });
}

Tensor DequantizeBlocks(const BlockQuantized& q) {
  const BlockLayout layout(q.values.sizes(), q.axis, q.block_size);
  auto allocated = Tensor::Allocate(DataType::kFloat32, q.values.sizes());
  QTUNE_CHECK(allocated.ok());
  Tensor out = std::move(allocated).value();
  float* y = out.data<float>();
  const uint8_t* values = q.values.data<uint8_t>();
  const uint8_t* scales = q.scales.data<uint8_t>();
  const bool nvfp4 = q.values.dtype() == DataType::kFloat4E2M1;
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t a = 0; a < layout.axis_size; ++a) {
      for (int64_t i = 0; i < layout.inner; ++i) {
        const uint8_t s = scales[layout.Scale(o, a / layout.block, i)];
        const int64_t e = layout.Element(o, a, i);
        y[e] = nvfp4 ? Float4E2M1ToFloat(values[e]) * (Float8E4M3FNToFloat(s) * q.global_scale)
                     : Float8E4M3FNToFloat(values[e]) * Float8E8M0ToFloat(s);
      }
    }
  }
  return out;
}

}  // namespace qtune
