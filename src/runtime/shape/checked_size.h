// Checked int64 arithmetic for shape functions. Sizes come from a model's constants and
// attributes (Pad amounts, Reshape shapes, strides, dilations, Resize scales, split sizes)
// and from dims that may each be up to 2^63-1 when another dim is 0, so a sum or product
// of them may not fit int64; signed overflow is undefined behaviour, so every such step
// goes through these and a false result becomes a ShapeError naming the node.
#pragma once

#include <cmath>
#include <cstdint>

namespace qtune::runtime {

// *out = a + b; false if that does not fit int64.
[[nodiscard]] inline bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// *out = a - b; false if that does not fit int64.
[[nodiscard]] inline bool CheckedSub(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_sub_overflow(a, b, out);
}

// *out = a * b; false if that does not fit int64.
[[nodiscard]] inline bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// *out = (int64_t)v (truncating); false for NaN, infinities and values outside
// [0, 2^62] (a size computed from a float scale; converting an out-of-range double to an
// integer is undefined behaviour).
[[nodiscard]] inline bool SizeFromDouble(double v, int64_t* out) {
  if (!(v >= 0.0 && v <= 4611686018427387904.0)) return false;  // also catches NaN
  *out = static_cast<int64_t>(v);
  return true;
}

}  // namespace qtune::runtime
