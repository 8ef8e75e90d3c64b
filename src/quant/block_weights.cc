#include "quant/block_weights.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "core/float_convert.h"

namespace qtune::quant {
namespace {

// float16's smallest normal: fp16 scales never go below it (they would flush to zero).
constexpr float kMinFp16Scale = 6.103515625e-05f;

float RoundScale(float scale, bool fp16) {
  if (!std::isfinite(scale) || scale <= 0.0f) scale = 1.0f;
  if (fp16) {
    scale = std::clamp(scale, kMinFp16Scale, 65504.0f);
    return HalfToFloat(FloatToHalf(scale));
  }
  return std::max(scale, kMinBlockScale);
}

// Round half to even (the default floating-point rounding mode).
float Rne(float v) { return std::nearbyint(v); }

struct GroupParams {
  float scale = 1.0f;
  int zero_point = 0;  // asymmetric only
};

// Scale and zero point of one group from its range, shrunk by `factor`.
GroupParams ParamsFor(float lo, float hi, float factor, const MatrixQuantSpec& spec) {
  GroupParams p;
  const int levels = (1 << spec.bits) - 1;  // 15 / 255
  if (spec.symmetric) {
    const int qmax = (1 << (spec.bits - 1)) - 1;  // 7 / 127
    const float amax = std::max(std::fabs(lo), std::fabs(hi)) * factor;
    p.scale = amax > 0.0f ? RoundScale(amax / static_cast<float>(qmax), spec.fp16_scales) : 1.0f;
    return p;
  }
  lo = std::min(lo, 0.0f) * factor;
  hi = std::max(hi, 0.0f) * factor;
  if (hi - lo <= 0.0f) return p;
  p.scale = RoundScale((hi - lo) / static_cast<float>(levels), spec.fp16_scales);
  p.zero_point = static_cast<int>(std::clamp(Rne(-lo / p.scale), 0.0f, static_cast<float>(levels)));
  return p;
}

int Code(float w, const GroupParams& p, const MatrixQuantSpec& spec) {
  if (spec.symmetric) {
    const float qmax = static_cast<float>((1 << (spec.bits - 1)) - 1);
    return static_cast<int>(std::clamp(Rne(w / p.scale), -qmax, qmax));
  }
  const float levels = static_cast<float>((1 << spec.bits) - 1);
  return static_cast<int>(
      std::clamp(Rne(w / p.scale) + static_cast<float>(p.zero_point), 0.0f, levels));
}

float Dequant(int code, const GroupParams& p) {
  return static_cast<float>(code - p.zero_point) * p.scale;
}

}  // namespace

float QuantizedMatrix::Dequantize(int64_t row, int64_t col) const {
  const int64_t g = (row / group) * n + col;
  const int zp = symmetric ? 0 : zero_points[static_cast<size_t>(g)];
  const int code = symmetric ? codes[static_cast<size_t>(row * n + col)]
                             : static_cast<uint8_t>(codes[static_cast<size_t>(row * n + col)]);
  return static_cast<float>(code - zp) * scales[static_cast<size_t>(g)];
}

QuantizedMatrix QuantizeMatrix(const float* w, int64_t k, int64_t n, int64_t row_stride,
                               int64_t col_stride, const MatrixQuantSpec& spec) {
  QTUNE_CHECK(spec.bits == 4 || spec.bits == 8);
  QTUNE_CHECK(spec.group > 0 && k % spec.group == 0);
  QTUNE_CHECK(spec.channel_weight.empty() || static_cast<int64_t>(spec.channel_weight.size()) == k);
  QuantizedMatrix m;
  m.k = k;
  m.n = n;
  m.group = spec.group;
  m.bits = spec.bits;
  m.symmetric = spec.symmetric;
  const int64_t groups = k / spec.group;
  m.codes.resize(static_cast<size_t>(k * n));
  m.scales.resize(static_cast<size_t>(groups * n));
  if (!spec.symmetric) m.zero_points.resize(static_cast<size_t>(groups * n));
  auto at = [&](int64_t row, int64_t col) { return w[row * row_stride + col * col_stride]; };
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t r0 = g * spec.group, r1 = r0 + spec.group;
    for (int64_t col = 0; col < n; ++col) {
      float lo = 0.0f, hi = 0.0f;
      for (int64_t r = r0; r < r1; ++r) {
        const float v = at(r, col);
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
      }
      GroupParams best = ParamsFor(lo, hi, 1.0f, spec);
      if (spec.clip_search) {
        double best_err = std::numeric_limits<double>::infinity();
        for (int step = 0; step <= 10; ++step) {
          const float factor = 1.0f - 0.05f * static_cast<float>(step);
          GroupParams p = ParamsFor(lo, hi, factor, spec);
          double err = 0.0;
          for (int64_t r = r0; r < r1; ++r) {
            const float v = at(r, col);
            const double d = static_cast<double>(v) - Dequant(Code(v, p, spec), p);
            err += d * d * (spec.channel_weight.empty() ? 1.0 : spec.channel_weight[r]);
          }
          if (err < best_err) best_err = err, best = p;
        }
      }
      m.scales[static_cast<size_t>(g * n + col)] = best.scale;
      if (!spec.symmetric) {
        m.zero_points[static_cast<size_t>(g * n + col)] = static_cast<uint8_t>(best.zero_point);
      }
      for (int64_t r = r0; r < r1; ++r) {
        const float v = at(r, col);
        m.codes[static_cast<size_t>(r * n + col)] =
            static_cast<int8_t>(Code(std::isfinite(v) ? v : 0.0f, best, spec));
      }
    }
  }
  return m;
}

std::vector<uint8_t> PackNibbles(std::span<const int8_t> codes) {
  std::vector<uint8_t> out((codes.size() + 1) / 2, 0);
  for (size_t i = 0; i < codes.size(); ++i) {
    const uint8_t nibble = static_cast<uint8_t>(codes[i]) & 0x0F;
    out[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? nibble : nibble << 4);
  }
  return out;
}

StatusOr<DequantizeInputs> ToDequantizeInputs(const QuantizedMatrix& m, bool transposed,
                                              bool fp16_scales) {
  const bool per_channel = m.group == m.k;
  const int64_t groups = m.k / m.group;
  const std::vector<int64_t> sizes =
      transposed ? std::vector<int64_t>{m.n, m.k} : std::vector<int64_t>{m.k, m.n};
  std::vector<int64_t> scale_sizes;
  if (per_channel) {
    scale_sizes = {m.n};
  } else {
    scale_sizes =
        transposed ? std::vector<int64_t>{m.n, groups} : std::vector<int64_t>{groups, m.n};
  }
  return LayOutDequantizeInputs(
      m, fp16_scales, sizes,
      [&](int64_t r, int64_t c) { return transposed ? c * m.k + r : r * m.n + c; }, scale_sizes,
      [&](int64_t g, int64_t c) {
        return per_channel ? c : (transposed ? c * groups + g : g * m.n + c);
      },
      "weights");
}

}  // namespace qtune::quant
