// Conversions between float32 and the narrow floating-point formats, bit-exact with
// ONNX's reference (onnx.numpy_helper / onnx.reference) rules:
// - float16 and bfloat16: round to nearest even; NaN stays NaN; overflow becomes inf.
// - float8 e4m3fn (no inf; NaN = 0x7F/0xFF; max 448) and e5m2 (IEEE-like, max 57344):
//   round to nearest even. With `saturate` (ONNX's default), finite values beyond the
//   range clamp to +-max and +-inf becomes +-max (both formats, as ONNX's Cast table
//   says); without it they become NaN (e4m3fn) or +-inf (e5m2). NaN always maps to NaN.
// - float4 e2m1 (values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; no inf, no NaN):
//   round to nearest even, always saturating (+-inf become +-6), NaN becomes +6 (0x7), as
//   ONNX's reference does. Codes are 4 bits, sign in bit 3.
// - float8 e8m0 (2^(e - 127) for e in 0..254; 0xFF is NaN; no sign, no zero): see
//   FloatToFloat8E8M0.
#pragma once

#include <cstdint>

namespace qtune {

uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);
uint16_t FloatToBfloat16(float value);
float Bfloat16ToFloat(uint16_t bits);
uint8_t FloatToFloat8E4M3FN(float value, bool saturate = true);
float Float8E4M3FNToFloat(uint8_t bits);
uint8_t FloatToFloat8E5M2(float value, bool saturate = true);
float Float8E5M2ToFloat(uint8_t bits);
uint8_t FloatToFloat4E2M1(float value);
// Only the low 4 bits of `code` are read.
float Float4E2M1ToFloat(uint8_t code);

// How a value between two powers of two becomes one (ONNX Cast-24's round_mode).
enum class E8M0Rounding {
  kUp,       // the next power of two at or above |value| (ONNX's default)
  kDown,     // the power of two at or below |value|
  kNearest,  // the nearer one in linear distance; the midpoint 1.5 * 2^k goes up
};
// The E8M0 code of |value| (the sign is dropped). NaN -> 0xFF. +-inf and magnitudes that
// round above 2^127 -> 0xFE (2^127) with `saturate`, else 0xFF. Zero and magnitudes that
// round below 2^-127 -> 0x00 (2^-127, the smallest code).
uint8_t FloatToFloat8E8M0(float value, E8M0Rounding rounding = E8M0Rounding::kUp,
                          bool saturate = true);
// 2^(code - 127); NaN for 0xFF. 0x00 (2^-127) is a float32 subnormal, exact.
float Float8E8M0ToFloat(uint8_t code);

}  // namespace qtune
