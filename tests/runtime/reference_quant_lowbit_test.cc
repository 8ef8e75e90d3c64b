// DequantizeLinear / QuantizeLinear with the low-bit types: int4 (opset 21), float4e2m1
// values (opset 23) and float8e8m0 scales (opset 24), blocked; NVFP4's two-DequantizeLinear
// chain against core/block_float.h; and corrupt block-scaled inputs (errors, never crashes).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/block_float.h"
#include "reference_quant_test_util.h"

namespace qtune::runtime::testing {
namespace {

OpCall DQ(std::vector<Tensor> inputs, int64_t opset, std::vector<Attribute> attrs = {}) {
  return {.op_type = "DequantizeLinear",
          .inputs = std::move(inputs),
          .attributes = std::move(attrs),
          .opset = opset};
}
OpCall Q(std::vector<Tensor> inputs, int64_t opset, std::vector<Attribute> attrs = {}) {
  return {.op_type = "QuantizeLinear",
          .inputs = std::move(inputs),
          .attributes = std::move(attrs),
          .opset = opset};
}
Tensor Codes(DataType type, std::vector<int64_t> sizes, const std::vector<uint8_t>& codes) {
  return Float8(type, std::move(sizes), codes);  // any one-byte type from raw bytes
}
std::string ErrorOf(const OpCall& call) { return RunOp(call).status().ToString(); }
Attribute Block(int64_t size) { return Attribute::Int("block_size", size); }

TEST(LowBitDequantizeTest, Int4BlockedAlongAxis0) {
  Tensor x = Codes(DataType::kInt4, {4}, {0xF8, 7, 3, 0xFF});  // -8 7 3 -1
  Tensor y = RunQuant1(DQ({x, F32({2}, {0.5f, 2.0f})}, 21, {Attribute::Int("axis", 0), Block(2)}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{-4.0f, 3.5f, 6.0f, -2.0f}));
}

TEST(LowBitDequantizeTest, Float4E2M1BlockedWithFloatScales) {
  // 0x1 = 0.5, 0x7 = 6, 0xA = -1, 0x5 = 3; blocks of 2 with scales 2 and 0.5.
  Tensor x = Codes(DataType::kFloat4E2M1, {1, 4}, {0x1, 0x7, 0xA, 0x5});
  Tensor y = RunQuant1(DQ({x, F32({1, 2}, {2.0f, 0.5f})}, 23, {Block(2)}));
  ASSERT_EQ(y.dtype(), DataType::kFloat32);
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1.0f, 12.0f, -0.5f, 1.5f}));
}

TEST(LowBitDequantizeTest, Float4E2M1NeedsOpset23) {
  Tensor x = Codes(DataType::kFloat4E2M1, {2}, {0x1, 0x2});
  const std::string error = ErrorOf(DQ({x, ScalarF32(1)}, 21));
  EXPECT_NE(error.find("float4e2m1 from 23"), std::string::npos) << error;
}

TEST(LowBitDequantizeTest, E8M0ScalesNeedOpset24AndAnOutputDtype) {
  // e4m3 0x38 = 1, 0xC0 = -2; e8m0 129 = 4.
  Tensor x = Codes(DataType::kFloat8E4M3FN, {2}, {0x38, 0xC0});
  Tensor scale = Codes(DataType::kFloat8E8M0, {1}, {129});
  Tensor y = RunQuant1(
      DQ({x, scale}, 24, {Attribute::Int("axis", 0), Block(2), Attribute::Int("output_dtype", 1)}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{4.0f, -8.0f}));
  const std::string early = ErrorOf(DQ({x, scale}, 23, {Block(2), Attribute::Int("axis", 0)}));
  EXPECT_NE(early.find("float8e8m0 from opset 24"), std::string::npos) << early;
  const std::string no_dtype = ErrorOf(DQ({x, scale}, 24, {Block(2), Attribute::Int("axis", 0)}));
  EXPECT_NE(no_dtype.find("set output_dtype"), std::string::npos) << no_dtype;
  const std::string bad_dtype = ErrorOf(
      DQ({x, scale}, 24, {Block(2), Attribute::Int("axis", 0), Attribute::Int("output_dtype", 3)}));
  EXPECT_NE(bad_dtype.find("output_dtype 3"), std::string::npos) << bad_dtype;
}

TEST(LowBitDequantizeTest, E8M0NanScaleIsAnErrorNamingTheScale) {
  Tensor x = Codes(DataType::kFloat8E4M3FN, {4}, {0x38, 0x38, 0x38, 0x38});
  Tensor scale = Codes(DataType::kFloat8E8M0, {2}, {127, 0xFF});
  OpCall call =
      DQ({x, scale}, 24, {Attribute::Int("axis", 0), Block(2), Attribute::Int("output_dtype", 1)});
  auto result = RunOp(call);
  ASSERT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  const std::string error = result.status().ToString();
  EXPECT_NE(error.find("x_scale 'in1'"), std::string::npos) << error;
  EXPECT_NE(error.find("at index 1"), std::string::npos) << error;
  EXPECT_NE(error.find("0xFF is NaN"), std::string::npos) << error;
}

TEST(LowBitDequantizeTest, WrongScaleCountNamesTheScale) {
  Tensor x = Codes(DataType::kFloat4E2M1, {32}, std::vector<uint8_t>(32, 0x2));
  OpCall call = DQ({x, F32({3}, {1, 1, 1})}, 23, {Attribute::Int("axis", 0), Block(16)});
  auto result = RunOp(call);
  ASSERT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  const std::string error = result.status().ToString();
  EXPECT_NE(error.find("scale 'in1'"), std::string::npos) << error;
  EXPECT_NE(error.find("needs [2]"), std::string::npos) << error;
}

TEST(LowBitDequantizeTest, InfiniteFloatScaleIsAnError) {
  Tensor x = Codes(DataType::kFloat4E2M1, {4}, {1, 1, 1, 1});
  auto result =
      RunOp(DQ({x, F32({2}, {1.0f, INFINITY})}, 23, {Attribute::Int("axis", 0), Block(2)}));
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

// NVFP4 as exported: y = DQ(values, DQ(block_scales_e4m3, global_fp32), block 16). The
// reference chain must give exactly core/block_float.h's DequantizeBlocks.
TEST(LowBitDequantizeTest, Nvfp4ChainMatchesTheCodecBitForBit) {
  std::vector<float> w(48 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.71f * i) * (0.1f + (i % 7));
  auto q = QuantizeNvfp4(F32({48, 3}, w), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  Tensor scales = RunQuant1(DQ({q->scales, ScalarF32(q->global_scale)}, 23));
  ASSERT_EQ(scales.dtype(), DataType::kFloat32);
  Tensor y = RunQuant1(DQ({q->values, scales}, 23, {Attribute::Int("axis", 0), Block(16)}));
  EXPECT_EQ(Values<float>(y), Values<float>(DequantizeBlocks(*q)));
}

TEST(LowBitDequantizeTest, Mxfp8MatchesTheCodecBitForBit) {
  std::vector<float> w(2 * 70);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.3f * i) * (1 + i % 11) * 0.01f;
  auto q = QuantizeMxfp8(F32({2, 70}, w), 1);  // blocks 32, 32, 6 along axis 1
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  Tensor y =
      RunQuant1(DQ({q->values, q->scales}, 24,
                   {Attribute::Int("axis", 1), Block(32), Attribute::Int("output_dtype", 1)}));
  EXPECT_EQ(Values<float>(y), Values<float>(DequantizeBlocks(*q)));
}

TEST(LowBitQuantizeTest, Float4E2M1OutputRoundsHalfToEven) {
  // x / 0.5: 0.5 -> 1, 1.25 -> 2.5 -> 2 (0x4), -1.75 -> -3.5 -> -4 (0xE), 100 -> 6 (0x7).
  Tensor x = F32({4}, {0.25f, 1.25f, -1.75f, 100.0f});
  Tensor zp = Codes(DataType::kFloat4E2M1, {}, {0});
  Tensor y = RunQuant1(Q({x, ScalarF32(0.5f), zp}, 23));
  ASSERT_EQ(y.dtype(), DataType::kFloat4E2M1);
  EXPECT_EQ(Bits(y), (std::vector<uint8_t>{0x1, 0x4, 0xE, 0x7}));
}

}  // namespace
}  // namespace qtune::runtime::testing
