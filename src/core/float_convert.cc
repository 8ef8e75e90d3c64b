// Narrow float conversions. All encoders work on the float32 bit pattern with integer
// arithmetic, so results do not depend on the FPU rounding mode.
//
// The float8 rules follow the ONNX Cast specification (opset 19+): round to nearest even;
// with saturate, finite values whose rounded magnitude exceeds the format's max and
// +-inf become +-max; without it they become NaN (e4m3fn) or +-inf (e5m2). NaN encodes
// as ONNX's reference does: 0x7F | sign for both float8 formats, 0x7FC0 for bfloat16,
// and numpy's rule (payload kept, forced non-zero) for float16.
#include "core/float_convert.h"

#include <bit>
#include <cstdint>

namespace qtune {
namespace {

constexpr uint32_t kF32SignMask = 0x80000000u;
constexpr uint32_t kF32ExpMask = 0x7F800000u;
constexpr uint32_t kF32MantMask = 0x007FFFFFu;

// Describes a small binary floating-point format with an implicit leading bit.
struct NarrowFormat {
  int mantissa_bits;    // stored fraction bits (M)
  int exponent_bias;    // B
  uint32_t max_finite;  // largest finite magnitude code, e.g. 0x7E for e4m3fn
  uint32_t sign_bit;    // 0x80 for float8, 0x8000 for float16
};

constexpr NarrowFormat kHalf = {10, 15, 0x7BFFu, 0x8000u};
constexpr NarrowFormat kE4M3FN = {3, 7, 0x7Eu, 0x80u};
constexpr NarrowFormat kE5M2 = {2, 15, 0x7Bu, 0x80u};
constexpr NarrowFormat kE2M1 = {1, 1, 0x7u, 0x8u};

enum class RoundResult { kFinite, kOverflow };

// Rounds the finite, non-NaN float32 with bit pattern `bits` to nearest even in `format`.
// Writes the magnitude code (no sign) to `*code`; reports kOverflow when the rounded
// magnitude is larger than format.max_finite.
RoundResult RoundToFormat(uint32_t bits, const NarrowFormat& format, uint32_t* code) {
  const uint32_t biased_exp = (bits & kF32ExpMask) >> 23;
  const uint32_t mant = bits & kF32MantMask;
  if (biased_exp == 0) {
    // Zero or a float32 subnormal (< 2^-126): far below half the smallest subnormal of
    // every format handled here, so it rounds to zero.
    *code = 0;
    return RoundResult::kFinite;
  }
  const int exponent = static_cast<int>(biased_exp) - 127;  // value = 1.m * 2^exponent
  const int min_exponent = 1 - format.exponent_bias;        // smallest normal exponent
  // Quantum of the result is 2^(target_exponent - M); below min_exponent the result is
  // subnormal and the quantum stays at its minimum.
  const int target_exponent = exponent > min_exponent ? exponent : min_exponent;
  // significand = 1.m as an integer with 23 fraction bits; drop `shift` bits from it.
  const uint32_t significand = (1u << 23) | mant;
  const int shift = 23 - format.mantissa_bits + (target_exponent - exponent);
  if (shift >= 25) {
    // significand < 2^24 <= half a quantum (ties at exactly half round to even, i.e. 0).
    *code = 0;
    return RoundResult::kFinite;
  }
  uint32_t quotient = significand >> shift;
  const uint32_t remainder = significand & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1u) != 0)) ++quotient;
  // quotient is in [2^M, 2^(M+1)] for normal results and [0, 2^M] for subnormal ones;
  // adding the exponent step makes a carry into the exponent field come out right.
  const int exponent_step = target_exponent - min_exponent;
  if (exponent_step > 64) return RoundResult::kOverflow;  // far beyond every format
  *code = (static_cast<uint32_t>(exponent_step) << format.mantissa_bits) + quotient;
  return *code > format.max_finite ? RoundResult::kOverflow : RoundResult::kFinite;
}

uint32_t FloatBits(float value) { return std::bit_cast<uint32_t>(value); }

bool IsNanBits(uint32_t bits) {
  return (bits & kF32ExpMask) == kF32ExpMask && (bits & kF32MantMask) != 0;
}

bool IsInfBits(uint32_t bits) { return (bits & ~kF32SignMask) == kF32ExpMask; }

// Decodes a format with an implicit leading bit; `code` has no sign bit. Handles zero,
// subnormals and normals; the caller handles inf and NaN.
float DecodeFinite(uint32_t code, const NarrowFormat& format) {
  const uint32_t frac_mask = (1u << format.mantissa_bits) - 1;
  uint32_t exp_field = code >> format.mantissa_bits;
  uint32_t frac = code & frac_mask;
  if (exp_field == 0) {
    if (frac == 0) return 0.0f;
    // Subnormal: normalize into a float32 normal (always representable).
    int exponent = 1 - format.exponent_bias;
    while ((frac & (1u << format.mantissa_bits)) == 0) {
      frac <<= 1;
      --exponent;
    }
    frac &= frac_mask;
    uint32_t bits =
        (static_cast<uint32_t>(exponent + 127) << 23) | (frac << (23 - format.mantissa_bits));
    return std::bit_cast<float>(bits);
  }
  int exponent = static_cast<int>(exp_field) - format.exponent_bias;
  uint32_t bits =
      (static_cast<uint32_t>(exponent + 127) << 23) | (frac << (23 - format.mantissa_bits));
  return std::bit_cast<float>(bits);
}

float WithSign(float magnitude, bool negative) {
  uint32_t bits = FloatBits(magnitude);
  return std::bit_cast<float>(negative ? (bits | kF32SignMask) : bits);
}

}  // namespace

uint16_t FloatToHalf(float value) {
  const uint32_t bits = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits & kF32SignMask) >> 16);
  if (IsNanBits(bits)) {
    // numpy's rule: keep the top payload bits, but never produce the inf pattern.
    uint16_t payload = static_cast<uint16_t>((bits & kF32MantMask) >> 13);
    if (payload == 0) payload = 1;
    return sign | 0x7C00u | payload;
  }
  if (IsInfBits(bits)) return sign | 0x7C00u;
  uint32_t code = 0;
  if (RoundToFormat(bits, kHalf, &code) == RoundResult::kOverflow) return sign | 0x7C00u;
  return sign | static_cast<uint16_t>(code);
}

float HalfToFloat(uint16_t bits) {
  const bool negative = (bits & 0x8000u) != 0;
  const uint32_t magnitude = bits & 0x7FFFu;
  if ((magnitude & 0x7C00u) == 0x7C00u) {
    // inf (fraction 0) or NaN (payload moves to the top of the float32 fraction).
    uint32_t f = kF32ExpMask | ((magnitude & 0x03FFu) << 13);
    return WithSign(std::bit_cast<float>(f), negative);
  }
  return WithSign(DecodeFinite(magnitude, kHalf), negative);
}

uint16_t FloatToBfloat16(float value) {
  const uint32_t bits = FloatBits(value);
  if (IsNanBits(bits)) return 0x7FC0u;  // ONNX's canonical bfloat16 NaN
  // Round to nearest even on the low 16 bits; a carry correctly overflows into inf.
  const uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float Bfloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint8_t FloatToFloat8E4M3FN(float value, bool saturate) {
  const uint32_t bits = FloatBits(value);
  const uint8_t sign = static_cast<uint8_t>((bits & kF32SignMask) >> 24);
  constexpr uint8_t kNan = 0x7F;
  constexpr uint8_t kMax = 0x7E;  // 448
  if (IsNanBits(bits)) return sign | kNan;
  if (IsInfBits(bits)) return sign | (saturate ? kMax : kNan);
  uint32_t code = 0;
  if (RoundToFormat(bits, kE4M3FN, &code) == RoundResult::kOverflow) {
    return sign | (saturate ? kMax : kNan);
  }
  return sign | static_cast<uint8_t>(code);
}

float Float8E4M3FNToFloat(uint8_t bits) {
  const bool negative = (bits & 0x80u) != 0;
  const uint32_t magnitude = bits & 0x7Fu;
  if (magnitude == 0x7Fu) return WithSign(std::bit_cast<float>(0x7FC00000u), negative);
  return WithSign(DecodeFinite(magnitude, kE4M3FN), negative);
}

uint8_t FloatToFloat8E5M2(float value, bool saturate) {
  const uint32_t bits = FloatBits(value);
  const uint8_t sign = static_cast<uint8_t>((bits & kF32SignMask) >> 24);
  constexpr uint8_t kNan = 0x7F;
  constexpr uint8_t kInf = 0x7C;
  constexpr uint8_t kMax = 0x7B;  // 57344
  if (IsNanBits(bits)) return sign | kNan;
  if (IsInfBits(bits)) return sign | (saturate ? kMax : kInf);
  uint32_t code = 0;
  if (RoundToFormat(bits, kE5M2, &code) == RoundResult::kOverflow) {
    return sign | (saturate ? kMax : kInf);
  }
  return sign | static_cast<uint8_t>(code);
}

float Float8E5M2ToFloat(uint8_t bits) {
  const bool negative = (bits & 0x80u) != 0;
  const uint32_t magnitude = bits & 0x7Fu;
  if ((magnitude & 0x7Cu) == 0x7Cu) {
    uint32_t f = kF32ExpMask | ((magnitude & 0x03u) << 21);
    return WithSign(std::bit_cast<float>(f), negative);
  }
  return WithSign(DecodeFinite(magnitude, kE5M2), negative);
}

uint8_t FloatToFloat4E2M1(float value) {
  const uint32_t bits = FloatBits(value);
  constexpr uint8_t kMax = 0x7;  // 6
  if (IsNanBits(bits)) return kMax;
  const uint8_t sign = (bits & kF32SignMask) != 0 ? 0x8 : 0x0;
  if (IsInfBits(bits)) return sign | kMax;
  uint32_t code = 0;
  if (RoundToFormat(bits, kE2M1, &code) == RoundResult::kOverflow) return sign | kMax;
  return sign | static_cast<uint8_t>(code);
}

float Float4E2M1ToFloat(uint8_t code) {
  return WithSign(DecodeFinite(code & 0x7u, kE2M1), (code & 0x8u) != 0);
}

uint8_t FloatToFloat8E8M0(float value, E8M0Rounding rounding, bool saturate) {
  constexpr uint8_t kNan = 0xFF;
  constexpr uint8_t kMax = 0xFE;  // 2^127
  const uint32_t bits = FloatBits(value) & ~kF32SignMask;
  if (IsNanBits(bits)) return kNan;
  if (IsInfBits(bits)) return saturate ? kMax : kNan;
  if (bits == 0) return 0x00;
  // |value| = significand * 2^exponent with significand in [1, 2) (normals) or the
  // subnormal's significand in [2^-23, 1) at exponent -126 made normal here.
  int exponent = static_cast<int>(bits >> 23) - 127;
  uint32_t mant = bits & kF32MantMask;
  if ((bits >> 23) == 0) {  // float32 subnormal: normalize
    exponent = -126;
    while ((mant & (1u << 23)) == 0) {
      mant <<= 1;
      --exponent;
    }
    mant &= kF32MantMask;
  }
  bool up = false;
  switch (rounding) {
    case E8M0Rounding::kUp:
      up = mant != 0;
      break;
    case E8M0Rounding::kDown:
      up = false;
      break;
    case E8M0Rounding::kNearest:
      up = mant >= (1u << 22);  // significand >= 1.5
      break;
  }
  const int e = exponent + (up ? 1 : 0);
  if (e > 127) return saturate ? kMax : kNan;
  if (e < -127) return 0x00;
  return static_cast<uint8_t>(e + 127);
}

float Float8E8M0ToFloat(uint8_t code) {
  if (code == 0xFF) return std::bit_cast<float>(0x7FC00000u);
  if (code == 0x00) return std::bit_cast<float>(0x00400000u);  // 2^-127, subnormal
  return std::bit_cast<float>(static_cast<uint32_t>(code) << 23);
}

}  // namespace qtune
