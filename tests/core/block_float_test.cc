// NVFP4 and MXFP8 block quantization (core/block_float.h), whole blocks by hand.
#include "core/block_float.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/float_convert.h"

namespace qtune {
namespace {

Tensor Vector(std::vector<int64_t> sizes, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(sizes), values);
}

TEST(Nvfp4Test, GlobalScaleIsAmaxOver2688) {
  EXPECT_EQ(Nvfp4GlobalScale(5.25f), std::ldexp(1.0f, -9));  // 5.25 = 2688 / 512
  EXPECT_EQ(Nvfp4GlobalScale(2688.0f), 1.0f);
  EXPECT_EQ(Nvfp4GlobalScale(0.0f), 1.0f);
}

// Two blocks of 16. Tensor amax 5.25 makes the global scale 2^-9 exactly.
// Block 0 (amax 5.25): scale 5.25 / 6 / 2^-9 = 448 -> E4M3 0x7E; decoded 448 * 2^-9 =
// 0.875, and every value is 0.875 times an E2M1 value or a midpoint between two.
// Block 1 (amax 1): 1 / 6 * 512 = 85.33 -> E4M3 88 (1.375 * 2^6, 0x6B); decoded
// 88 * 2^-9 = 0.171875.
TEST(Nvfp4Test, TwoBlocksByHand) {
  std::vector<float> x(32, 0.0f);
  // value / 0.875:     6       -3        0.5      1.5      2.5(tie)  0.25(tie) 5(tie) 0.75(tie)
  const float b0[8] = {5.25f, -2.625f, 0.4375f, 1.3125f, 2.1875f, 0.21875f, 4.375f, 0.65625f};
  const uint8_t c0[8] = {0x7, 0xD, 0x1, 0x3, 0x4, 0x0, 0x6, 0x2};
  for (int k = 0; k < 8; ++k) x[k] = b0[k];
  // value / 0.171875:   5.82 -> 6  -2.91 -> -3  0.58 -> 0.5
  const float b1[3] = {1.0f, -0.5f, 0.1f};
  const uint8_t c1[3] = {0x7, 0xD, 0x1};
  for (int k = 0; k < 3; ++k) x[16 + k] = b1[k];

  auto q = QuantizeNvfp4(Vector({32}, x), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->global_scale, std::ldexp(1.0f, -9));
  EXPECT_EQ(q->values.dtype(), DataType::kFloat4E2M1);
  ASSERT_EQ(q->scales.sizes(), std::vector<int64_t>{2});
  EXPECT_EQ(q->scales.dtype(), DataType::kFloat8E4M3FN);
  EXPECT_EQ(q->scales.data<uint8_t>()[0], 0x7E);
  EXPECT_EQ(q->scales.data<uint8_t>()[1], 0x6B);
  const uint8_t* codes = q->values.data<uint8_t>();
  for (int k = 0; k < 8; ++k) EXPECT_EQ(codes[k], c0[k]) << k;
  for (int k = 8; k < 16; ++k) EXPECT_EQ(codes[k], 0) << k;
  for (int k = 0; k < 3; ++k) EXPECT_EQ(codes[16 + k], c1[k]) << k;

  const Tensor y = DequantizeBlocks(*q);
  EXPECT_EQ(y.data<float>()[0], 5.25f);
  EXPECT_EQ(y.data<float>()[1], -2.625f);
  EXPECT_EQ(y.data<float>()[4], 1.75f);  // 2 * 0.875
  EXPECT_EQ(y.data<float>()[16], 1.03125f);
  EXPECT_EQ(y.data<float>()[17], -0.515625f);
  EXPECT_EQ(y.data<float>()[18], 0.0859375f);
}

TEST(Nvfp4Test, BlockScaleBelowE4M3RangeGivesZeros) {
  // Tensor amax 2688 -> global 1; the second block's scale 1e-6 / 6 rounds to E4M3 0.
  std::vector<float> x(32, 0.0f);
  x[0] = 2688.0f;
  x[16] = 1e-6f;
  auto q = QuantizeNvfp4(Vector({32}, x), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->scales.data<uint8_t>()[1], 0x00);
  EXPECT_EQ(q->values.data<uint8_t>()[16], 0);
  EXPECT_EQ(DequantizeBlocks(*q).data<float>()[16], 0.0f);
}

TEST(Nvfp4Test, BlocksRunAlongTheAxisWithAPartialLastBlock) {
  // [20, 3] along axis 0: blocks rows 0..15 and 16..19, one scale per column each.
  std::vector<float> x(60);
  for (int i = 0; i < 60; ++i) x[i] = std::sin(0.37f * i) * (1 + i % 3);
  auto q = QuantizeNvfp4(Vector({20, 3}, x), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->scales.sizes(), (std::vector<int64_t>{2, 3}));
  const Tensor y = DequantizeBlocks(*q);
  for (int i = 0; i < 60; ++i) {
    // The largest E2M1 step is 2 (4 -> 6) times the block scale (about amax / 6, E4M3
    // rounding adds up to 1/16): the error stays below amax / 6 * 1.2.
    const float block_amax_bound = 3.0f;  // |x| <= 3
    EXPECT_NEAR(y.data<float>()[i], x[i], block_amax_bound / 6 * 1.2f) << i;
  }
  // The column with the largest values sets the global scale: amax / 2688.
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  EXPECT_EQ(q->global_scale, amax / 2688.0f);
}

TEST(Mxfp8Test, ScaleIsAmaxOver448RoundedUpToAPowerOfTwo) {
  EXPECT_EQ(Mxfp8ScaleCode(448.0f), 127);      // 448 / 2^0 = 448 fits
  EXPECT_EQ(Mxfp8ScaleCode(448.00003f), 128);  // just above: 2^1
  EXPECT_EQ(Mxfp8ScaleCode(7.0f), 127 - 6);    // 7 * 64 = 448
  EXPECT_EQ(Mxfp8ScaleCode(1.0f), 127 - 8);    // 256 <= 448 < 512
  EXPECT_EQ(Mxfp8ScaleCode(2.0f), 127 - 7);
  EXPECT_EQ(Mxfp8ScaleCode(0.0f), 127);         // all-zero block
  EXPECT_EQ(Mxfp8ScaleCode(1e-38f), 0);         // 2^-127 clamps
  EXPECT_EQ(Mxfp8ScaleCode(3e38f), 127 + 120);  // 3e38 / 2^120 = 225.7
}

// One block of 32 with amax 7: scale 2^-6 (code 121); values x * 64 in E4M3:
// 1 -> 64 (0x68), -3 -> -192 (0xF4), 0.3 -> 19.2 -> 20 (1.25 * 16, 0x5A), 7 -> 448 (0x7E),
// 0.0078125 (2^-7) -> 0.5 (2^-1, 0x30).
TEST(Mxfp8Test, OneBlockByHand) {
  std::vector<float> x(32, 0.0f);
  x[0] = 1.0f;
  x[1] = -3.0f;
  x[2] = 0.3f;
  x[3] = 7.0f;
  x[31] = 0.0078125f;
  auto q = QuantizeMxfp8(Vector({1, 32}, x), 1);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->values.dtype(), DataType::kFloat8E4M3FN);
  EXPECT_EQ(q->scales.dtype(), DataType::kFloat8E8M0);
  ASSERT_EQ(q->scales.sizes(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(q->scales.data<uint8_t>()[0], 121);
  const uint8_t* v = q->values.data<uint8_t>();
  EXPECT_EQ(v[0], 0x68);
  EXPECT_EQ(v[1], 0xF4);
  EXPECT_EQ(v[2], 0x5A);
  EXPECT_EQ(v[3], 0x7E);
  EXPECT_EQ(v[31], 0x30);
  for (int k = 4; k < 31; ++k) EXPECT_EQ(v[k], 0) << k;
  const Tensor y = DequantizeBlocks(*q);
  EXPECT_EQ(y.data<float>()[0], 1.0f);
  EXPECT_EQ(y.data<float>()[1], -3.0f);
  EXPECT_EQ(y.data<float>()[2], 0.3125f);
  EXPECT_EQ(y.data<float>()[3], 7.0f);
  EXPECT_EQ(y.data<float>()[31], 0.0078125f);
}

TEST(Mxfp8Test, PartialLastBlockHasItsOwnScale) {
  std::vector<float> x(40, 1.0f);
  x[35] = 104.0f;  // the second block (8 elements): amax 104 -> 2^-2 (104 * 4 = 416)
  auto q = QuantizeMxfp8(Vector({40}, x), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_EQ(q->scales.sizes(), std::vector<int64_t>{2});
  EXPECT_EQ(q->scales.data<uint8_t>()[0], 127 - 8);
  EXPECT_EQ(q->scales.data<uint8_t>()[1], 127 - 2);
  const Tensor y = DequantizeBlocks(*q);
  EXPECT_EQ(y.data<float>()[35], 104.0f);  // 416 = 1.625 * 256 is an E4M3 value
  EXPECT_EQ(y.data<float>()[34], 1.0f);
}

TEST(BlockFloatTest, NonFiniteOrNonFloatInputIsRefused) {
  std::vector<float> x(16, 1.0f);
  x[5] = std::numeric_limits<float>::infinity();
  auto q = QuantizeNvfp4(Vector({16}, x), 0);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("element 5"), std::string::npos) << q.status().ToString();
  x[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(QuantizeMxfp8(Vector({16}, x), 0).ok());
  EXPECT_FALSE(QuantizeMxfp8(Vector({16}, std::vector<float>(16, 1.0f)), 1).ok());  // axis
  EXPECT_FALSE(QuantizeMxfp8(Tensor::FromVector<int32_t>({2}, {1, 2}), 0).ok());
}

}  // namespace
}  // namespace qtune
