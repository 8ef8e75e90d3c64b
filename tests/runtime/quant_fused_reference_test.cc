// The integer references of qtune::QConv and qtune::QMatMul against the float composition
// quantize(op(dequantize(x))) they stand for (within 1 LSB everywhere), a hand-computed
// case, saturation, and the inputs the contract rejects.
#include <gtest/gtest.h>

#include <cstdio>

#include "ir/builder.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/quant_test_util.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::quant_testing {
namespace {

using namespace qlinear;

void CheckAgainstFloat(bool matmul, uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  int64_t total = 0, exact = 0;
  for (int i = 0; i < cases; ++i) {
    QSpec spec = RandomSpec(rng, {.matmul = matmul, .weight_zero_points = true});
    QCase c = MakeQCase(spec, rng, seed);
    auto integer = RunIntegerReference(c);
    ASSERT_TRUE(integer.ok()) << c.label << ": " << integer.status().ToString();
    auto composed = RunFloatComposition(c);
    ASSERT_TRUE(composed.ok()) << c.label << ": " << composed.status().ToString();
    Diff d = CompareOutputs(*integer, *composed);
    double allowed = spec.y_type == DataType::kFloat32 ? 1e-5 : 1.0;
    EXPECT_LE(d.max_error, allowed) << c.label << " case " << i << " seed " << seed
                                    << " (QTUNE_TEST_SEED): " << d.first_mismatch;
    if (spec.y_type != DataType::kFloat32) {  // bit-exactness is counted on integer outputs
      total += d.total;
      exact += d.exact;
    }
  }
  std::printf(
      "[ integer reference vs float composition ] %s: %lld of %lld integer output elements equal "
      "(%.4f)\n",
      matmul ? "QMatMul" : "QConv", static_cast<long long>(exact), static_cast<long long>(total),
      static_cast<double>(exact) / total);
}

TEST(QuantFusedReference, QConvMatchesFloatCompositionWithin1Lsb) {
  CheckAgainstFloat(/*matmul=*/false, TestSeed(5101), 200);
}

TEST(QuantFusedReference, QMatMulMatchesFloatCompositionWithin1Lsb) {
  CheckAgainstFloat(/*matmul=*/true, TestSeed(5102), 100);
}

// X u8 [1,1,2,2] = {10,20,30,40}, x_scale 0.5, x_zp 10; W s8 {1,2,3,4}, w_scale 0.25;
// acc = 0*1 + 10*2 + 20*3 + 30*4 = 200, real = 200 * 0.125 + B 1 = 26;
// y_scale 0.5, y_zp 3 -> 52 + 3 = 55.
QCase HandCase() {
  QCase c;
  c.spec.kernel = {2, 2};
  c.attributes = {ir::Attribute::Ints("kernel_shape", {2, 2})};
  c.inputs.resize(9);
  c.inputs[kX] = Tensor::FromVector<uint8_t>({1, 1, 2, 2}, {10, 20, 30, 40});
  c.inputs[kXScale] = Tensor::Scalar<float>(0.5f);
  c.inputs[kXZeroPoint] = Tensor::Scalar<uint8_t>(10);
  c.inputs[kW] = Tensor::FromVector<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  c.inputs[kWScale] = Tensor::Scalar<float>(0.25f);
  c.inputs[kWZeroPoint] = Tensor::Scalar<int8_t>(0);
  c.inputs[kBias] = Tensor::FromVector<float>({1}, {1.0f});
  c.inputs[kYScale] = Tensor::Scalar<float>(0.5f);
  c.inputs[kYZeroPoint] = Tensor::Scalar<uint8_t>(3);
  return c;
}

TEST(QuantFusedReference, HandComputedConv) {
  auto y = RunIntegerReference(HandCase());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->sizes(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(y->data<uint8_t>()[0], 55);
}

TEST(QuantFusedReference, HandComputedConvWithQuantizedSumAndWeightZeroPoint) {
  QCase c = HandCase();
  c.inputs[kWZeroPoint] = Tensor::Scalar<int8_t>(1);  // w - 1 = {0,1,2,3}: acc = 140
  c.inputs.resize(12);
  c.inputs[kSum] = Tensor::FromVector<int8_t>({1, 1, 1, 1}, {-5});
  c.inputs[kSumScale] = Tensor::Scalar<float>(2.0f);
  c.inputs[kSumZeroPoint] = Tensor::Scalar<int8_t>(-3);  // dq = 2 * (-5 + 3) = -4
  // real = 140 * 0.125 + 1 - 4 = 14.5 -> 29 + 3 = 32.
  auto y = RunIntegerReference(c);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->data<uint8_t>()[0], 32);
}

TEST(QuantFusedReference, FloatOutputWhenYScaleIsOmitted) {
  QCase c = HandCase();
  c.inputs[kYScale] = Tensor();
  c.inputs[kYZeroPoint] = Tensor();
  auto y = RunIntegerReference(c);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->dtype(), DataType::kFloat32);
  EXPECT_EQ(y->data<float>()[0], 26.0f);
}

TEST(QuantFusedReference, OutputSaturatesAndTiesRoundToEven) {
  QCase c = HandCase();
  c.inputs[kYScale] = Tensor::Scalar<float>(0.05f);  // 26 / 0.05 = 520 -> 255
  auto high = RunIntegerReference(c);
  ASSERT_TRUE(high.ok());
  EXPECT_EQ(high->data<uint8_t>()[0], 255);
  c.inputs[kBias] = Tensor::FromVector<float>({1}, {-100.0f});  // negative -> 0
  auto low = RunIntegerReference(c);
  ASSERT_TRUE(low.ok());
  EXPECT_EQ(low->data<uint8_t>()[0], 0);
  // real = 25 + 0.5 = 25.5 with y_scale 1: a tie, rounds to 26 (even), + zp 3 = 29.
  c.inputs[kBias] = Tensor::FromVector<float>({1}, {0.5f});
  c.inputs[kYScale] = Tensor::Scalar<float>(1.0f);
  auto tie = RunIntegerReference(c);
  ASSERT_TRUE(tie.ok());
  EXPECT_EQ(tie->data<uint8_t>()[0], 29);
}

TEST(QuantFusedReference, RejectsInputsTheContractForbids) {
  QCase no_zp = HandCase();
  no_zp.inputs[kYZeroPoint] = Tensor();
  EXPECT_FALSE(RunIntegerReference(no_zp).ok());
  QCase bad_bias = HandCase();
  bad_bias.inputs[kBias] = Tensor::FromVector<float>({2}, {1.0f, 2.0f});
  EXPECT_FALSE(RunIntegerReference(bad_bias).ok());
  QCase bad_scale = HandCase();
  bad_scale.inputs[kXScale] = Tensor::Scalar<float>(0.0f);
  EXPECT_FALSE(RunIntegerReference(bad_scale).ok());
  QCase float_x = HandCase();
  float_x.inputs[kX] = Tensor::FromVector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_FALSE(RunIntegerReference(float_x).ok());
  QCase wrong_zp_type = HandCase();
  wrong_zp_type.inputs[kXZeroPoint] = Tensor::Scalar<int8_t>(10);
  EXPECT_FALSE(RunIntegerReference(wrong_zp_type).ok());
  QCase half_sum = HandCase();
  half_sum.inputs.resize(12);
  half_sum.inputs[kSum] = Tensor::FromVector<int8_t>({1, 1, 1, 1}, {1});
  half_sum.inputs[kSumScale] = Tensor::Scalar<float>(1.0f);
  EXPECT_FALSE(RunIntegerReference(half_sum).ok());
}

}  // namespace
}  // namespace qtune::runtime::quant_testing
