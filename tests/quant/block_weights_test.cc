// Low-bit weight rounding pinned against hand-computed values (block_weights.h), the
// effective bits, nibble packing, and the AWQ scale search on a layer where it must help.
#include "quant/block_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/float_convert.h"
#include "quant/awq.h"

namespace qtune::quant {
namespace {

// One column (N = 1) of `values`, quantized in groups of `group`.
QuantizedMatrix Column(const std::vector<float>& values, int bits, bool symmetric, int64_t group,
                       bool fp16 = false) {
  MatrixQuantSpec spec;
  spec.bits = bits;
  spec.symmetric = symmetric;
  spec.group = group;
  spec.fp16_scales = fp16;
  return QuantizeMatrix(values.data(), static_cast<int64_t>(values.size()), 1, 1, 1, spec);
}

TEST(BlockWeightsTest, SymmetricInt4ScaleIsAmaxOverSevenAndTiesGoToEven) {
  // amax 1.75 -> scale 0.25 exactly; -0.875 / 0.25 = -3.5 -> -4, 0.125 / 0.25 = 0.5 -> 0,
  // 0.375 / 0.25 = 1.5 -> 2 (round half to even).
  QuantizedMatrix m = Column({1.75f, -0.875f, 0.125f, 0.375f}, 4, true, 4);
  ASSERT_EQ(m.scales.size(), 1u);
  EXPECT_EQ(m.scales[0], 0.25f);
  EXPECT_EQ(m.codes, (std::vector<int8_t>{7, -4, 0, 2}));
  EXPECT_TRUE(m.zero_points.empty());
  EXPECT_EQ(m.Dequantize(1, 0), -1.0f);
  EXPECT_EQ(m.Dequantize(3, 0), 0.5f);
}

TEST(BlockWeightsTest, OneScalePerBlockAlongK) {
  // Two blocks of 2: amax 7 -> scale 1; amax 0.7 -> scale 0.1.
  QuantizedMatrix m = Column({7.0f, -2.0f, 0.7f, 0.35f}, 4, true, 2);
  ASSERT_EQ(m.scales.size(), 2u);
  EXPECT_EQ(m.scales[0], 1.0f);
  EXPECT_FLOAT_EQ(m.scales[1], 0.1f);
  EXPECT_EQ(m.codes[0], 7);
  EXPECT_EQ(m.codes[1], -2);
  EXPECT_EQ(m.codes[2], 7);
}

TEST(BlockWeightsTest, AsymmetricUint4HasAZeroPoint) {
  // lo -1.5, hi 2.25: scale 3.75 / 15 = 0.25, zp = 1.5 / 0.25 = 6; 0.125 / 0.25 = 0.5 -> 0
  // (even) + 6 = 6; 0.5 -> 2 + 6 = 8.
  QuantizedMatrix m = Column({-1.5f, 2.25f, 0.5f, 0.125f}, 4, false, 4);
  ASSERT_EQ(m.zero_points.size(), 1u);
  EXPECT_EQ(m.scales[0], 0.25f);
  EXPECT_EQ(m.zero_points[0], 6);
  EXPECT_EQ(m.codes, (std::vector<int8_t>{0, 15, 8, 6}));
  EXPECT_EQ(m.Dequantize(0, 0), -1.5f);
  EXPECT_EQ(m.Dequantize(1, 0), 2.25f);
}

TEST(BlockWeightsTest, AsymmetricRangeAlwaysHoldsZero) {
  // All positive: lo = 0, so zp = 0 and scale = 3 / 15 = 0.2.
  QuantizedMatrix m = Column({1.0f, 3.0f}, 4, false, 2);
  EXPECT_EQ(m.zero_points[0], 0);
  EXPECT_FLOAT_EQ(m.scales[0], 0.2f);
  EXPECT_EQ(m.codes[1], 15);
}

TEST(BlockWeightsTest, Int8SymmetricPerChannel) {
  // group = K: amax 2.54 -> scale 0.02, qmax 127.
  QuantizedMatrix m = Column({2.54f, -1.0f, 0.001f}, 8, true, 3);
  EXPECT_FLOAT_EQ(m.scales[0], 0.02f);
  EXPECT_EQ(m.codes[0], 127);
  EXPECT_EQ(m.codes[1], -50);
  EXPECT_EQ(m.codes[2], 0);
}

TEST(BlockWeightsTest, Fp16ScalesAreRoundedBeforeTheCodes) {
  // scale 0.7 / 7 = 0.1 is not a float16; the codes use the rounded 0.0999755859375.
  QuantizedMatrix m = Column({0.7f, 0.35f}, 4, true, 2, /*fp16=*/true);
  const float rounded = HalfToFloat(FloatToHalf(0.1f));
  EXPECT_EQ(m.scales[0], rounded);
  EXPECT_EQ(m.codes[0], 7);
  EXPECT_EQ(m.codes[1], static_cast<int8_t>(std::nearbyint(0.35f / rounded)));
  EXPECT_EQ(m.Dequantize(0, 0), 7 * rounded);
}

TEST(BlockWeightsTest, ZeroBlockGetsScaleOneAndZeroCodes) {
  QuantizedMatrix m = Column({0.0f, 0.0f, 0.0f, 0.0f}, 4, true, 4, true);
  EXPECT_EQ(m.scales[0], 1.0f);
  EXPECT_EQ(m.codes, (std::vector<int8_t>{0, 0, 0, 0}));
}

TEST(BlockWeightsTest, TransposedLayoutReadsTheSameMatrix) {
  // K = 2, N = 3 stored [N, K] (Gemm transB): element (k, j) at w[j * 2 + k].
  const float wt[6] = {1, 2, 3, 4, 5, 6};
  const float w[6] = {1, 3, 5, 2, 4, 6};  // [K, N]
  MatrixQuantSpec spec;
  spec.group = 2;
  QuantizedMatrix a = QuantizeMatrix(wt, 2, 3, 1, 2, spec);
  QuantizedMatrix b = QuantizeMatrix(w, 2, 3, 3, 1, spec);
  EXPECT_EQ(a.codes, b.codes);
  EXPECT_EQ(a.scales, b.scales);
}

TEST(BlockWeightsTest, ClipSearchShrinksTheRangeWhenTheOutlierRowDoesNotMatter) {
  // 16 rows: an outlier 1.0 on row 0 whose input channel is always zero, 0.1 elsewhere.
  std::vector<float> w(16, 0.1f);
  w[0] = 1.0f;
  std::vector<float> weight(16, 1.0f);
  weight[0] = 0.0f;
  MatrixQuantSpec spec;
  spec.group = 16;
  spec.clip_search = true;
  spec.channel_weight = weight;
  QuantizedMatrix clipped = QuantizeMatrix(w.data(), 16, 1, 1, 1, spec);
  spec.clip_search = false;
  QuantizedMatrix rtn = QuantizeMatrix(w.data(), 16, 1, 1, 1, spec);
  EXPECT_FLOAT_EQ(rtn.scales[0], 1.0f / 7);
  // 0.7 x the range puts 0.1 exactly on the first level: scale 0.1.
  EXPECT_NEAR(clipped.scales[0], 0.1f, 1e-6f);
  double err_rtn = 0, err_clip = 0;
  for (int r = 1; r < 16; ++r) {
    err_rtn += std::pow(rtn.Dequantize(r, 0) - w[r], 2);
    err_clip += std::pow(clipped.Dequantize(r, 0) - w[r], 2);
  }
  EXPECT_LT(err_clip, err_rtn);
}

TEST(BlockWeightsTest, PackNibblesLowNibbleFirst) {
  EXPECT_EQ(PackNibbles(std::vector<int8_t>{1, -1, 7, -8, 3}),
            (std::vector<uint8_t>{0xF1, 0x87, 0x03}));
}

TEST(BlockWeightsTest, EffectiveBitsCountScalesAndZeroPoints) {
  QuantizerConfig c;
  c.format = QuantFormat::kInt4;
  c.bits = 4;
  c.block_size = 64;
  c.scale_type = ScaleType::kFloat16;
  EXPECT_DOUBLE_EQ(EffectiveBits(c, 2048), 4.25);
  c.symmetric = false;
  EXPECT_DOUBLE_EQ(EffectiveBits(c, 2048), 4.25 + 4.0 / 64);
  c.block_size = 128;
  c.symmetric = true;
  c.scale_type = ScaleType::kFloat32;
  EXPECT_DOUBLE_EQ(EffectiveBits(c, 2048), 4.25);
  QuantizerConfig int8;
  EXPECT_DOUBLE_EQ(EffectiveBits(int8, 2048), 8.0 + 32.0 / 2048);
}

TEST(BlockWeightsTest, DequantizeInputsHoldInt4CodesAndBlockScales) {
  const float w[8] = {1.75f, 0, -0.875f, 0, 0.125f, 0, 0.375f, 1};  // [K = 4, N = 2]
  MatrixQuantSpec spec;
  spec.group = 2;
  QuantizedMatrix m = QuantizeMatrix(w, 4, 2, 2, 1, spec);
  auto dq = ToDequantizeInputs(m, false, true);
  ASSERT_TRUE(dq.ok()) << dq.status().ToString();
  EXPECT_EQ(dq->data.dtype(), DataType::kInt4);
  EXPECT_EQ(dq->data.sizes(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(dq->scale.dtype(), DataType::kFloat16);
  EXPECT_EQ(dq->scale.sizes(), (std::vector<int64_t>{2, 2}));
  const auto* codes = static_cast<const int8_t*>(dq->data.raw_data());
  EXPECT_EQ(codes[0], 7);   // 1.75 / 0.25
  EXPECT_EQ(codes[2], -4);  // -0.875 / 0.25 = -3.5 -> -4
  EXPECT_EQ(HalfToFloat(dq->scale.data<uint16_t>()[0]), 0.25f);
}

TEST(AwqTest, ScalingProtectsTheSalientChannel) {
  // K = 64 (one block), N = 16. Channel 0 of x is 50x larger than the others, and its
  // weights are small: RTN rounds them to few levels (the block's amax comes from other
  // rows); AWQ scales row 0 up before quantizing.
  const int64_t k = 64, n = 16, rows = 32;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(k * n), x(rows * k), mean_abs(k, 0.0f);
  for (int64_t i = 0; i < k * n; ++i) w[i] = u(rng);
  for (int64_t j = 0; j < n; ++j) w[j] = 0.05f * u(rng);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c = 0; c < k; ++c) {
      x[i * k + c] = u(rng) * (c == 0 ? 50.0f : 1.0f);
      mean_abs[c] += std::fabs(x[i * k + c]) / rows;
    }
  }
  MatrixQuantSpec spec;
  spec.group = 64;
  AwqResult r = SearchAwqScale(w.data(), k, n, n, 1, x, rows, mean_abs, spec, 10);
  EXPECT_GT(r.alpha, 0.0f);
  EXPECT_LT(r.loss, 0.5 * r.loss_rtn);
  ASSERT_EQ(r.scale.size(), static_cast<size_t>(k));
  EXPECT_GT(r.scale[0], r.scale[1]);
}

}  // namespace
}  // namespace qtune::quant
