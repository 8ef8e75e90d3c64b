// Quantization arithmetic shared by the reference kernels, the fast kernels and the
// quantizer, so that every tier rounds and saturates the same way (ONNX semantics:
// round half to even, then saturate to the integer type's range).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace qtune {

// Round half to even (the default floating-point rounding mode; std::nearbyint honours it).
inline float RoundHalfToEven(float v) { return std::nearbyint(v); }

// saturate(round(v / scale) + zero_point) into Q (int8_t or uint8_t). NaN maps to the
// zero point's rounding of 0 (callers reject NaN scales before quantizing).
template <typename Q>
inline Q QuantizeToInt(float v, float scale, int32_t zero_point) {
  float q = RoundHalfToEven(v / scale) + static_cast<float>(zero_point);
  if (std::isnan(q)) q = static_cast<float>(zero_point);
  q = std::clamp(q, static_cast<float>(std::numeric_limits<Q>::min()),
                 static_cast<float>(std::numeric_limits<Q>::max()));
  return static_cast<Q>(q);
}

template <typename Q>
inline float DequantizeFromInt(Q q, float scale, int32_t zero_point) {
  return static_cast<float>(static_cast<int32_t>(q) - zero_point) * scale;
}

}  // namespace qtune
