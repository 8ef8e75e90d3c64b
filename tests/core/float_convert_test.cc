#include "core/float_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace qtune {
namespace {

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

bool IsHalfNan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }
bool IsBf16Nan(uint16_t h) { return (h & 0x7F80u) == 0x7F80u && (h & 0x007Fu) != 0; }
bool IsE4M3Nan(uint8_t c) { return (c & 0x7Fu) == 0x7Fu; }
bool IsE5M2Nan(uint8_t c) { return (c & 0x7Cu) == 0x7Cu && (c & 0x03u) != 0; }

// ---- Exhaustive decode -> encode round trips ------------------------------------------

TEST(FloatConvertTest, EveryHalfCodeRoundTripsExactly) {
  for (uint32_t code = 0; code < 65536; ++code) {
    uint16_t h = static_cast<uint16_t>(code);
    float f = HalfToFloat(h);
    EXPECT_EQ(std::isnan(f), IsHalfNan(h)) << std::hex << code;
    // NaN payloads survive too (numpy keeps them), so every code is exact.
    EXPECT_EQ(FloatToHalf(f), h) << "half code 0x" << std::hex << code;
  }
}

TEST(FloatConvertTest, EveryBfloat16CodeRoundTripsExceptNanPayload) {
  for (uint32_t code = 0; code < 65536; ++code) {
    uint16_t h = static_cast<uint16_t>(code);
    float f = Bfloat16ToFloat(h);
    if (IsBf16Nan(h)) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_EQ(FloatToBfloat16(f), 0x7FC0u);  // ONNX's canonical NaN
    } else {
      EXPECT_EQ(FloatToBfloat16(f), h) << "bf16 code 0x" << std::hex << code;
    }
  }
}

TEST(FloatConvertTest, EveryE4M3FNCodeRoundTripsWithAndWithoutSaturate) {
  for (uint32_t code = 0; code < 256; ++code) {
    uint8_t c = static_cast<uint8_t>(code);
    float f = Float8E4M3FNToFloat(c);
    EXPECT_EQ(std::isnan(f), IsE4M3Nan(c)) << code;
    EXPECT_FALSE(std::isinf(f)) << code;
    EXPECT_EQ(FloatToFloat8E4M3FN(f, true), c) << "e4m3fn code " << code;
    EXPECT_EQ(FloatToFloat8E4M3FN(f, false), c) << "e4m3fn code " << code;
  }
}

TEST(FloatConvertTest, EveryE5M2CodeRoundTripsExceptNanPayload) {
  for (uint32_t code = 0; code < 256; ++code) {
    uint8_t c = static_cast<uint8_t>(code);
    float f = Float8E5M2ToFloat(c);
    EXPECT_EQ(std::isnan(f), IsE5M2Nan(c)) << code;
    if (IsE5M2Nan(c)) {
      EXPECT_EQ(FloatToFloat8E5M2(f), (c & 0x80u) | 0x7Fu) << code;
      continue;
    }
    if (std::isinf(f)) {
      // Saturation turns inf into max (ONNX Cast table), so only the exact mode keeps it.
      EXPECT_EQ(FloatToFloat8E5M2(f, false), c) << code;
      EXPECT_EQ(FloatToFloat8E5M2(f, true), (c & 0x80u) | 0x7Bu) << code;
      continue;
    }
    EXPECT_EQ(FloatToFloat8E5M2(f, true), c) << "e5m2 code " << code;
    EXPECT_EQ(FloatToFloat8E5M2(f, false), c) << "e5m2 code " << code;
  }
}

// ---- Rounding between every pair of neighbours ----------------------------------------

// For consecutive positive finite codes lo, lo+1 with values a < b, the midpoint rounds
// to the even code, and one float32 ulp either side rounds to the nearer one.
template <typename Decode, typename Encode>
void CheckMidpoints(uint32_t max_code, uint32_t sign_bit, Decode decode, Encode encode) {
  for (uint32_t lo = 0; lo < max_code; ++lo) {
    float a = decode(lo);
    float b = decode(lo + 1);
    ASSERT_LT(a, b) << lo;
    float mid = a + (b - a) / 2;  // exact: both have far fewer bits than float32
    uint32_t even = (lo % 2 == 0) ? lo : lo + 1;
    EXPECT_EQ(encode(mid), even) << "midpoint above code " << lo;
    EXPECT_EQ(encode(std::nextafter(mid, 0.0f)), lo) << "just below midpoint " << lo;
    EXPECT_EQ(encode(std::nextafter(mid, kInf)), lo + 1) << "just above midpoint " << lo;
    EXPECT_EQ(encode(-mid), sign_bit | even) << "negative midpoint above code " << lo;
  }
}

TEST(FloatConvertTest, HalfMidpointsRoundToNearestEven) {
  CheckMidpoints(
      0x7BFF, 0x8000, [](uint32_t c) { return HalfToFloat(static_cast<uint16_t>(c)); },
      [](float f) { return static_cast<uint32_t>(FloatToHalf(f)); });
}

TEST(FloatConvertTest, E4M3FNMidpointsRoundToNearestEven) {
  CheckMidpoints(
      0x7E, 0x80, [](uint32_t c) { return Float8E4M3FNToFloat(static_cast<uint8_t>(c)); },
      [](float f) { return static_cast<uint32_t>(FloatToFloat8E4M3FN(f)); });
}

TEST(FloatConvertTest, E5M2MidpointsRoundToNearestEven) {
  CheckMidpoints(
      0x7B, 0x80, [](uint32_t c) { return Float8E5M2ToFloat(static_cast<uint8_t>(c)); },
      [](float f) { return static_cast<uint32_t>(FloatToFloat8E5M2(f)); });
}

TEST(FloatConvertTest, Bfloat16MidpointsRoundToNearestEven) {
  // Sample the whole positive range: every 97th code pair.
  for (uint32_t lo = 0; lo < 0x7F7F; lo += 97) {
    float a = Bfloat16ToFloat(static_cast<uint16_t>(lo));
    float b = Bfloat16ToFloat(static_cast<uint16_t>(lo + 1));
    float mid = FromBits((Bits(a) + Bits(b)) / 2);  // halfway in bits = halfway in value
    uint32_t even = (lo % 2 == 0) ? lo : lo + 1;
    EXPECT_EQ(FloatToBfloat16(mid), even) << lo;
    EXPECT_EQ(FloatToBfloat16(FromBits(Bits(mid) - 1)), lo) << lo;
    EXPECT_EQ(FloatToBfloat16(FromBits(Bits(mid) + 1)), lo + 1) << lo;
  }
}

// ---- Known values ---------------------------------------------------------------------

TEST(FloatConvertTest, E4M3FNKnownValues) {
  EXPECT_EQ(FloatToFloat8E4M3FN(0.0f), 0x00);
  EXPECT_EQ(FloatToFloat8E4M3FN(-0.0f), 0x80);
  EXPECT_EQ(FloatToFloat8E4M3FN(1.0f), 0x38);
  EXPECT_EQ(FloatToFloat8E4M3FN(-2.0f), 0xC0);
  EXPECT_EQ(FloatToFloat8E4M3FN(448.0f), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3FN(-448.0f), 0xFE);
  EXPECT_EQ(Float8E4M3FNToFloat(0x7E), 448.0f);
  EXPECT_EQ(Float8E4M3FNToFloat(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(Float8E4M3FNToFloat(0x07), 7 * std::ldexp(1.0f, -9));
  EXPECT_EQ(Float8E4M3FNToFloat(0x08), std::ldexp(1.0f, -6));  // smallest normal
  EXPECT_EQ(FloatToFloat8E4M3FN(std::ldexp(1.0f, -9)), 0x01);
  EXPECT_TRUE(std::signbit(Float8E4M3FNToFloat(0x80)));
  EXPECT_EQ(Float8E4M3FNToFloat(0x80), 0.0f);
}

TEST(FloatConvertTest, E4M3FNHalfOfSmallestSubnormalRoundsToZero) {
  EXPECT_EQ(FloatToFloat8E4M3FN(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(FloatToFloat8E4M3FN(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
  EXPECT_EQ(FloatToFloat8E4M3FN(-std::ldexp(1.0f, -10)), 0x80);
  EXPECT_EQ(FloatToFloat8E4M3FN(std::ldexp(3.0f, -10)), 0x02);  // 1.5 quanta -> 2 (even)
  EXPECT_EQ(FloatToFloat8E4M3FN(FromBits(1)), 0x00);            // float32 subnormal
}

TEST(FloatConvertTest, E4M3FNAboveMaxSaturatesOrBecomesNan) {
  // 464 is halfway between 448 (even code 0x7E) and the missing 480: rounds to 448.
  EXPECT_EQ(FloatToFloat8E4M3FN(464.0f, true), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3FN(464.0f, false), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3FN(460.0f, false), 0x7E);
  float above = std::nextafter(464.0f, kInf);
  EXPECT_EQ(FloatToFloat8E4M3FN(above, true), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3FN(above, false), 0x7F);
  EXPECT_EQ(FloatToFloat8E4M3FN(-above, false), 0xFF);
  EXPECT_EQ(FloatToFloat8E4M3FN(485.0f, false), 0x7F);  // ONNX 1.14's helper gave 448
  EXPECT_EQ(FloatToFloat8E4M3FN(1e9f, true), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3FN(-1e9f, true), 0xFE);
  EXPECT_EQ(FloatToFloat8E4M3FN(3e38f, false), 0x7F);
}

TEST(FloatConvertTest, E4M3FNInfinitySaturatesOrBecomesNan) {
  EXPECT_EQ(FloatToFloat8E4M3FN(kInf, true), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3FN(-kInf, true), 0xFE);
  EXPECT_EQ(FloatToFloat8E4M3FN(kInf, false), 0x7F);
  EXPECT_EQ(FloatToFloat8E4M3FN(-kInf, false), 0xFF);
}

TEST(FloatConvertTest, E4M3FNNanIsNanEvenWhenSignaling) {
  EXPECT_EQ(FloatToFloat8E4M3FN(kNan, true), 0x7F);
  EXPECT_EQ(FloatToFloat8E4M3FN(-kNan, false), 0xFF);
  EXPECT_EQ(FloatToFloat8E4M3FN(FromBits(0x7F800001u), true), 0x7F);  // signaling
  EXPECT_TRUE(std::isnan(Float8E4M3FNToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(Float8E4M3FNToFloat(0xFF)));
}

TEST(FloatConvertTest, E5M2KnownValues) {
  EXPECT_EQ(FloatToFloat8E5M2(1.0f), 0x3C);
  EXPECT_EQ(FloatToFloat8E5M2(-0.0f), 0x80);
  EXPECT_EQ(FloatToFloat8E5M2(57344.0f), 0x7B);
  EXPECT_EQ(Float8E5M2ToFloat(0x7B), 57344.0f);
  EXPECT_EQ(Float8E5M2ToFloat(0x01), std::ldexp(1.0f, -16));  // smallest subnormal
  EXPECT_EQ(Float8E5M2ToFloat(0x04), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(Float8E5M2ToFloat(0x7C), kInf);
  EXPECT_EQ(Float8E5M2ToFloat(0xFC), -kInf);
  EXPECT_EQ(FloatToFloat8E5M2(std::ldexp(1.0f, -17)), 0x00);  // tie -> even (0)
  EXPECT_EQ(FloatToFloat8E5M2(std::nextafter(std::ldexp(1.0f, -17), 1.0f)), 0x01);
}

TEST(FloatConvertTest, E5M2AboveMaxSaturatesOrBecomesInf) {
  // 61440 is halfway between 57344 (0x7B, odd) and inf's slot: it is beyond the range.
  EXPECT_EQ(FloatToFloat8E5M2(61440.0f, true), 0x7B);
  EXPECT_EQ(FloatToFloat8E5M2(61440.0f, false), 0x7C);
  float below = std::nextafter(61440.0f, 0.0f);
  EXPECT_EQ(FloatToFloat8E5M2(below, false), 0x7B);
  EXPECT_EQ(FloatToFloat8E5M2(-1e6f, true), 0xFB);
  EXPECT_EQ(FloatToFloat8E5M2(-1e6f, false), 0xFC);
}

TEST(FloatConvertTest, E5M2InfinityFollowsOnnxCastTable) {
  EXPECT_EQ(FloatToFloat8E5M2(kInf, true), 0x7B);
  EXPECT_EQ(FloatToFloat8E5M2(-kInf, true), 0xFB);
  EXPECT_EQ(FloatToFloat8E5M2(kInf, false), 0x7C);
  EXPECT_EQ(FloatToFloat8E5M2(-kInf, false), 0xFC);
}

TEST(FloatConvertTest, E5M2NanIsNan) {
  EXPECT_EQ(FloatToFloat8E5M2(kNan, true), 0x7F);
  EXPECT_EQ(FloatToFloat8E5M2(kNan, false), 0x7F);
  EXPECT_EQ(FloatToFloat8E5M2(-kNan), 0xFF);
  EXPECT_EQ(FloatToFloat8E5M2(FromBits(0x7F800001u)), 0x7F);
}

TEST(FloatConvertTest, HalfKnownValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);         // tie -> even
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 quanta -> 2
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3C02);  // tie -> even (up)
}

TEST(FloatConvertTest, HalfOverflowBecomesInf) {
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);  // below the 65520 halfway point
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // halfway, the even neighbour is inf
  EXPECT_EQ(FloatToHalf(-1e10f), 0xFC00);
  EXPECT_EQ(FloatToHalf(kInf), 0x7C00);
  EXPECT_EQ(FloatToHalf(-kInf), 0xFC00);
  EXPECT_EQ(HalfToFloat(0x7C00), kInf);
}

TEST(FloatConvertTest, HalfNanStaysNan) {
  EXPECT_TRUE(IsHalfNan(FloatToHalf(kNan)));
  EXPECT_TRUE(IsHalfNan(FloatToHalf(FromBits(0x7F800001u))));  // payload below half's
  EXPECT_EQ(FloatToHalf(FromBits(0x7F800001u)), 0x7C01);
  EXPECT_EQ(FloatToHalf(-kNan) & 0x8000u, 0x8000u);
}

TEST(FloatConvertTest, Bfloat16KnownValues) {
  EXPECT_EQ(FloatToBfloat16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBfloat16(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBfloat16(FromBits(0x3F808000u)), 0x3F80);              // tie -> even (down)
  EXPECT_EQ(FloatToBfloat16(FromBits(0x3F818000u)), 0x3F82);              // tie -> even (up)
  EXPECT_EQ(FloatToBfloat16(FromBits(0x00000001u)), 0x0000);              // tiny subnormal
  EXPECT_EQ(FloatToBfloat16(FromBits(0x00018000u)), 0x0002);              // subnormal tie -> even
  EXPECT_EQ(FloatToBfloat16(std::numeric_limits<float>::max()), 0x7F80);  // -> inf
  EXPECT_EQ(FloatToBfloat16(FromBits(0x7F7F7FFFu)), 0x7F7F);              // stays finite
  EXPECT_EQ(FloatToBfloat16(kInf), 0x7F80);
  EXPECT_EQ(FloatToBfloat16(-kInf), 0xFF80);
  EXPECT_EQ(FloatToBfloat16(kNan), 0x7FC0);
  EXPECT_EQ(FloatToBfloat16(FromBits(0x7F800001u)), 0x7FC0);  // would truncate to inf
  EXPECT_EQ(Bfloat16ToFloat(0x3F80), 1.0f);
}

// Brute force over a spread of float32 patterns against a nearest-value oracle built
// from the decoder: catches any disagreement between encoder and decoder.
TEST(FloatConvertTest, E4M3FNEncoderMatchesNearestValueOracle) {
  std::vector<float> values;
  for (uint32_t c = 0; c <= 0x7E; ++c) values.push_back(Float8E4M3FNToFloat(c));
  for (uint32_t bits = 0; bits < 0x44000000u; bits += 0x1003u) {  // up to 512
    float x = FromBits(bits);
    uint32_t best = 0;
    for (uint32_t c = 1; c <= 0x7E; ++c) {
      float d_best = std::fabs(values[best] - x), d = std::fabs(values[c] - x);
      if (d < d_best || (d == d_best && c % 2 == 0)) best = c;
    }
    uint8_t got = FloatToFloat8E4M3FN(x, false);
    // Values past 464 overflow (NaN without saturation); otherwise the oracle holds.
    if (x > 464.0f) {
      EXPECT_EQ(got, 0x7F) << x;
    } else {
      EXPECT_EQ(got, best) << x;
    }
  }
}

}  // namespace
}  // namespace qtune
