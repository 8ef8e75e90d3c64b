// E2M1 and E8M0 codecs (core/float_convert.h), pinned against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/float_convert.h"

namespace qtune {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

TEST(Float4E2M1Test, EveryCodeDecodesToItsValue) {
  const float expected[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (uint8_t code = 0; code < 8; ++code) {
    EXPECT_EQ(Float4E2M1ToFloat(code), expected[code]) << int(code);
    EXPECT_EQ(Float4E2M1ToFloat(code | 0x8), -expected[code]) << int(code);
    EXPECT_EQ(FloatToFloat4E2M1(expected[code]), code);
    if (code != 0) {
      EXPECT_EQ(FloatToFloat4E2M1(-expected[code]), code | 0x8);
    }
  }
  EXPECT_TRUE(std::signbit(Float4E2M1ToFloat(0x8)));  // -0
  EXPECT_EQ(Float4E2M1ToFloat(0xF7), 6.0f);           // only the low nibble counts
}

TEST(Float4E2M1Test, TiesRoundToTheEvenMantissa) {
  // Midpoints between neighbours: the neighbour with mantissa bit 0 wins.
  EXPECT_EQ(FloatToFloat4E2M1(0.25f), 0x0);  // 0 | 0.5   -> 0
  EXPECT_EQ(FloatToFloat4E2M1(0.75f), 0x2);  // 0.5 | 1   -> 1
  EXPECT_EQ(FloatToFloat4E2M1(1.25f), 0x2);  // 1 | 1.5   -> 1
  EXPECT_EQ(FloatToFloat4E2M1(1.75f), 0x4);  // 1.5 | 2   -> 2
  EXPECT_EQ(FloatToFloat4E2M1(2.5f), 0x4);   // 2 | 3     -> 2
  EXPECT_EQ(FloatToFloat4E2M1(3.5f), 0x6);   // 3 | 4     -> 4
  EXPECT_EQ(FloatToFloat4E2M1(5.0f), 0x6);   // 4 | 6     -> 4
  EXPECT_EQ(FloatToFloat4E2M1(-2.5f), 0xC);
  EXPECT_EQ(FloatToFloat4E2M1(-0.75f), 0xA);
}

TEST(Float4E2M1Test, JustOffTiesRoundToTheNearer) {
  EXPECT_EQ(FloatToFloat4E2M1(0.2500001f), 0x1);
  EXPECT_EQ(FloatToFloat4E2M1(0.7499999f), 0x1);
  EXPECT_EQ(FloatToFloat4E2M1(2.5000002f), 0x5);
  EXPECT_EQ(FloatToFloat4E2M1(5.0000005f), 0x7);
  EXPECT_EQ(FloatToFloat4E2M1(4.9999995f), 0x6);
  EXPECT_EQ(FloatToFloat4E2M1(0.1f), 0x0);
  EXPECT_EQ(FloatToFloat4E2M1(-0.1f), 0x8);  // rounds to -0
  EXPECT_EQ(FloatToFloat4E2M1(1e-30f), 0x0);
}

TEST(Float4E2M1Test, LargeValuesAndInfinitiesSaturateNanBecomesSix) {
  EXPECT_EQ(FloatToFloat4E2M1(6.5f), 0x7);
  EXPECT_EQ(FloatToFloat4E2M1(7.0f), 0x7);
  EXPECT_EQ(FloatToFloat4E2M1(1e30f), 0x7);
  EXPECT_EQ(FloatToFloat4E2M1(-1e30f), 0xF);
  EXPECT_EQ(FloatToFloat4E2M1(kInf), 0x7);
  EXPECT_EQ(FloatToFloat4E2M1(-kInf), 0xF);
  EXPECT_EQ(FloatToFloat4E2M1(kNan), 0x7);  // ONNX's reference: NaN -> +6
  EXPECT_EQ(FloatToFloat4E2M1(-kNan), 0x7);
}

TEST(Float8E8M0Test, DecodesPowersOfTwoAndNan) {
  EXPECT_EQ(Float8E8M0ToFloat(127), 1.0f);
  EXPECT_EQ(Float8E8M0ToFloat(128), 2.0f);
  EXPECT_EQ(Float8E8M0ToFloat(120), 1.0f / 128);
  EXPECT_EQ(Float8E8M0ToFloat(254), std::ldexp(1.0f, 127));
  EXPECT_EQ(Float8E8M0ToFloat(1), std::ldexp(1.0f, -126));
  EXPECT_EQ(Float8E8M0ToFloat(0), std::ldexp(1.0f, -127));  // a float32 subnormal
  EXPECT_TRUE(std::isnan(Float8E8M0ToFloat(0xFF)));
}

TEST(Float8E8M0Test, ExactPowersEncodeTheSameInEveryMode) {
  for (E8M0Rounding mode : {E8M0Rounding::kUp, E8M0Rounding::kDown, E8M0Rounding::kNearest}) {
    EXPECT_EQ(FloatToFloat8E8M0(1.0f, mode), 127);
    EXPECT_EQ(FloatToFloat8E8M0(0.5f, mode), 126);
    EXPECT_EQ(FloatToFloat8E8M0(1024.0f, mode), 137);
    EXPECT_EQ(FloatToFloat8E8M0(std::ldexp(1.0f, 127), mode), 254);
    EXPECT_EQ(FloatToFloat8E8M0(std::ldexp(1.0f, -126), mode), 1);
    EXPECT_EQ(FloatToFloat8E8M0(std::ldexp(1.0f, -127), mode), 0);  // subnormal input
    EXPECT_EQ(FloatToFloat8E8M0(-4.0f, mode), 129);                 // the sign is dropped
  }
}

TEST(Float8E8M0Test, BetweenPowersFollowsTheRoundingMode) {
  EXPECT_EQ(FloatToFloat8E8M0(3.0f), 129);  // up (default): 4
  EXPECT_EQ(FloatToFloat8E8M0(3.0f, E8M0Rounding::kDown), 128);
  EXPECT_EQ(FloatToFloat8E8M0(3.0f, E8M0Rounding::kNearest), 129);  // 1.5 * 2: midpoint up
  EXPECT_EQ(FloatToFloat8E8M0(2.9f, E8M0Rounding::kNearest), 128);
  EXPECT_EQ(FloatToFloat8E8M0(2.0000002f), 129);  // just above 2 rounds up to 4
  EXPECT_EQ(FloatToFloat8E8M0(2.0000002f, E8M0Rounding::kDown), 128);
  EXPECT_EQ(FloatToFloat8E8M0(0.75f), 127);
  EXPECT_EQ(FloatToFloat8E8M0(0.75f, E8M0Rounding::kDown), 126);
  // float32 subnormals: 3 * 2^-149 lies between 2^-148 and 2^-147; both below 2^-127.
  EXPECT_EQ(FloatToFloat8E8M0(std::ldexp(3.0f, -149)), 0);
}

TEST(Float8E8M0Test, ZeroInfinityNanAndOverflow) {
  EXPECT_EQ(FloatToFloat8E8M0(0.0f), 0x00);
  EXPECT_EQ(FloatToFloat8E8M0(-0.0f), 0x00);
  EXPECT_EQ(FloatToFloat8E8M0(kNan), 0xFF);
  EXPECT_EQ(FloatToFloat8E8M0(kInf), 0xFE);
  EXPECT_EQ(FloatToFloat8E8M0(kInf, E8M0Rounding::kUp, /*saturate=*/false), 0xFF);
  const float above_max = std::ldexp(1.5f, 127);  // rounds up to 2^128
  EXPECT_EQ(FloatToFloat8E8M0(above_max), 0xFE);
  EXPECT_EQ(FloatToFloat8E8M0(above_max, E8M0Rounding::kUp, /*saturate=*/false), 0xFF);
  EXPECT_EQ(FloatToFloat8E8M0(above_max, E8M0Rounding::kDown, /*saturate=*/false), 0xFE);
}

TEST(Float8E8M0Test, EveryCodeRoundTrips) {
  for (int code = 0; code < 255; ++code) {
    const float v = Float8E8M0ToFloat(static_cast<uint8_t>(code));
    EXPECT_EQ(FloatToFloat8E8M0(v), code);
  }
}

}  // namespace
}  // namespace qtune
