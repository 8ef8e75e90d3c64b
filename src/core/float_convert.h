// Conversions between float32 and the narrow floating-point formats, bit-exact with
// ONNX's reference (onnx.numpy_helper / onnx.reference) rules:
// - float16 and bfloat16: round to nearest even; NaN stays NaN; overflow becomes inf.
// - float8 e4m3fn (no inf; NaN = 0x7F/0xFF; max 448) and e5m2 (IEEE-like, max 57344):
//   round to nearest even. With `saturate` (ONNX's default), finite values beyond the
//   range clamp to +-max and +-inf becomes +-max (both formats, as ONNX's Cast table
//   says); without it they become NaN (e4m3fn) or +-inf (e5m2). NaN always maps to NaN.
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

}  // namespace qtune
