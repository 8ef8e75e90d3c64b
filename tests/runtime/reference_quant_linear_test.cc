// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear reference kernels (and their
// shape functions, which RunQuant checks on every successful call): hand-computed cases
// for each opset variant, and malformed inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "core/quant_math.h"
#include "reference_quant_test_util.h"

namespace qtune::runtime::testing {
namespace {

OpCall Q(std::vector<Tensor> inputs, int64_t opset = 13, std::vector<Attribute> attrs = {}) {
  return {.op_type = "QuantizeLinear",
          .inputs = std::move(inputs),
          .attributes = attrs,
          .opset = opset};
}
OpCall DQ(std::vector<Tensor> inputs, int64_t opset = 13, std::vector<Attribute> attrs = {}) {
  return {.op_type = "DequantizeLinear",
          .inputs = std::move(inputs),
          .attributes = attrs,
          .opset = opset};
}

// ------------------------------------------------------------------ QuantizeLinear

TEST(QuantizeLinearTest, RoundsHalfToEvenThenAddsZeroPoint) {
  Tensor y = RunQuant1(Q({F32({7}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.49f}), ScalarF32(1.0f),
                          Tensor::Scalar<uint8_t>(128)}));
  EXPECT_EQ(Values<uint8_t>(y), (std::vector<uint8_t>{128, 130, 130, 128, 126, 126, 131}));
}

TEST(QuantizeLinearTest, SaturatesToTheOutputType) {
  Tensor y8 =
      RunQuant1(Q({F32({3}, {-1000, 1000, 300}), ScalarF32(2), Tensor::Scalar<int8_t>(-1)}));
  EXPECT_EQ(Values<int8_t>(y8), (std::vector<int8_t>{-128, 127, 127}));
  Tensor yu = RunQuant1(Q({F32({3}, {-1000, 1000, 254.6f}), ScalarF32(1)}));
  EXPECT_EQ(Values<uint8_t>(yu), (std::vector<uint8_t>{0, 255, 255}));
}

TEST(QuantizeLinearTest, OmittedZeroPointMeansUint8Zero) {
  for (int64_t opset : {10, 13, 19, 21}) {
    Tensor y = RunQuant1(Q({F32({3}, {1, 2, 3.25f}), ScalarF32(0.5f)}, opset));
    ASSERT_EQ(y.dtype(), DataType::kUint8) << opset;
    EXPECT_EQ(Values<uint8_t>(y), (std::vector<uint8_t>{2, 4, 6})) << opset;  // 6.5 -> 6
  }
}

TEST(QuantizeLinearTest, AgreesWithQuantMathBitForBit) {
  std::vector<float> x;
  for (int i = -600; i <= 600; ++i) x.push_back(static_cast<float>(i) * 0.37f);
  const float scale = 0.74f;  // makes every odd multiple a tie (up to float rounding)
  Tensor y =
      RunQuant1(Q({F32({int64_t(x.size())}, x), ScalarF32(scale), Tensor::Scalar<int8_t>(3)}));
  std::vector<int8_t> values = Values<int8_t>(y);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(values[i], QuantizeToInt<int8_t>(x[i], scale, 3)) << "x = " << x[i];
  }
}

TEST(QuantizeLinearTest, Int32Input) {
  Tensor y = RunQuant1(Q({I32({2}, {5, -7}), ScalarF32(2), Tensor::Scalar<int8_t>(0)}));
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{2, -4}));  // 2.5 -> 2, -3.5 -> -4
}

TEST(QuantizeLinearTest, PerAxisOnAxis0And1AndMinus1) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y0 =
      RunQuant1(Q({x, F32({2}, {1, 2}), U8({2}, {0, 10})}, 13, {Attribute::Int("axis", 0)}));
  EXPECT_EQ(Values<uint8_t>(y0), (std::vector<uint8_t>{1, 2, 3, 12, 12, 13}));  // 2.5 -> 2
  // Default axis 1: 0.75 -> 1, 2.5 -> 2, 1.5 -> 2.
  Tensor y1 = RunQuant1(Q({x, F32({3}, {1, 2, 4}), U8({3}, {0, 0, 0})}));
  EXPECT_EQ(Values<uint8_t>(y1), (std::vector<uint8_t>{1, 1, 1, 4, 2, 2}));
  Tensor x3 = F32({2, 1, 2}, {3, 3, 5, 5});
  Tensor ym1 =
      RunQuant1(Q({x3, F32({2}, {1, 2}), I8({2}, {0, -1})}, 13, {Attribute::Int("axis", -1)}));
  EXPECT_EQ(Values<int8_t>(ym1), (std::vector<int8_t>{3, 1, 5, 1}));  // 1.5->2, 2.5->2
}

TEST(QuantizeLinearTest, PerAxisScaleThatDoesNotFitIsInvalid) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(CodeOf(Q({x, F32({2}, {1, 2})})), StatusCode::kInvalidArgument);  // axis 1 has 3
  EXPECT_EQ(CodeOf(Q({x, F32({3}, {1, 2, 3}), U8({2}, {0, 0})})), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Q({x, F32({3}, {1, 2, 3})}, 13, {Attribute::Int("axis", 2)})),
            StatusCode::kInvalidArgument);
  // Opset 10 knows only per-tensor scales.
  EXPECT_EQ(CodeOf(Q({x, F32({3}, {1, 2, 3})}, 10)), StatusCode::kInvalidArgument);
}

TEST(QuantizeLinearTest, BlockedAlongAxis1WithUnevenLastBlock) {
  Tensor x = F32({2, 5}, {2, 4, 6, 8, 10, 8, 8, 8, 8, 8});
  Tensor scale = F32({2, 3}, {1, 2, 4, 4, 8, 1});
  Tensor y = RunQuant1(Q({x, scale}, 21, {Attribute::Int("block_size", 2)}));
  // Row 0: blocks {2,4}/1, {6,8}/2, {10}/4 = 2.5 -> 2; row 1: /4, /8 (1), /1.
  EXPECT_EQ(Values<uint8_t>(y), (std::vector<uint8_t>{2, 4, 3, 4, 2, 2, 2, 1, 1, 8}));
}

TEST(QuantizeLinearTest, BlockedAlongAxis0) {
  Tensor x = F32({4, 1}, {1, 2, 3, 4});
  Tensor y = RunQuant1(Q({x, F32({2, 1}, {1, 2}), I8({2, 1}, {0, 5})}, 21,
                         {Attribute::Int("axis", 0), Attribute::Int("block_size", 2)}));
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{1, 2, 7, 7}));  // 1.5 -> 2
}

TEST(QuantizeLinearTest, BlockedMalformedIsInvalid) {
  Tensor x = F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto blocked = [](int64_t b) { return std::vector<Attribute>{Attribute::Int("block_size", b)}; };
  EXPECT_EQ(CodeOf(Q({x, F32({2, 3}, {1, 1, 1, 1, 1, 1})}, 21, blocked(2))),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Q({x, F32({2}, {1, 1})}, 21, blocked(2))), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Q({x, F32({2, 2}, {1, 1, 1, 1})}, 21, blocked(-1))),
            StatusCode::kInvalidArgument);
  // block_size does not exist before opset 21.
  EXPECT_EQ(CodeOf(Q({x, F32({2, 2}, {1, 1, 1, 1})}, 19, blocked(2))),
            StatusCode::kInvalidArgument);
}

TEST(QuantizeLinearTest, Int16AndUint16FromOpset21) {
  Tensor y = RunQuant1(
      Q({F32({3}, {70000, -1.5f, -40000}), ScalarF32(1), Tensor::Scalar<int16_t>(0)}, 21));
  EXPECT_EQ(Values<int16_t>(y), (std::vector<int16_t>{32767, -2, -32768}));
  Tensor yu = RunQuant1(Q({F32({3}, {65535.6f, 1.5f, -3}), ScalarF32(1)}, 21,
                          {Attribute::Int("output_dtype", 4)}));  // uint16, no zero point
  ASSERT_EQ(yu.dtype(), DataType::kUint16);
  EXPECT_EQ(Values<uint16_t>(yu), (std::vector<uint16_t>{65535, 2, 0}));
  EXPECT_EQ(CodeOf(Q({F32({1}, {1}), ScalarF32(1), Tensor::Scalar<int16_t>(0)}, 19)),
            StatusCode::kInvalidArgument);
}

TEST(QuantizeLinearTest, OutputDtypeMustAgreeWithZeroPoint) {
  EXPECT_EQ(CodeOf(Q({F32({1}, {1}), ScalarF32(1), Tensor::Scalar<int8_t>(0)}, 21,
                     {Attribute::Int("output_dtype", 2)})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Q({F32({1}, {1}), ScalarF32(1)}, 19, {Attribute::Int("output_dtype", 3)})),
            StatusCode::kInvalidArgument);  // the attribute is opset 21's
}

TEST(QuantizeLinearTest, Int4AndUint4SaturateToTheirNibbleRange) {
  // int4 [-8, 7]: 2.5 -> 2 (half to even), -9 -> -8, 100 -> 7; held one per byte.
  Tensor x = F32({4}, {2.5f, -9.0f, 100.0f, -3.5f});
  Tensor y4 = RunQuant1(Q({x, ScalarF32(1)}, 21, {Attribute::Int("output_dtype", 22)}));
  ASSERT_EQ(y4.dtype(), DataType::kInt4);
  EXPECT_EQ(Values<int8_t>(y4), (std::vector<int8_t>{2, -8, 7, -4}));
  // uint4 [0, 15] with zero point 8: 2.5 + 8 -> 10, -9 + 8 -> 0, 100 -> 15, -3.5 + 8 -> 4.
  Tensor zp = *Tensor::Allocate(DataType::kUint4, {});
  zp.data<uint8_t>()[0] = 8;
  Tensor yu = RunQuant1(Q({x, ScalarF32(1), zp}, 21));
  ASSERT_EQ(yu.dtype(), DataType::kUint4);
  EXPECT_EQ(Values<uint8_t>(yu), (std::vector<uint8_t>{10, 0, 15, 4}));
}

TEST(QuantizeLinearTest, Float8SaturateOnAndOff) {
  Tensor x = F32({4}, {1000, -1000, 0.3f, 1.0f});
  Tensor zp = Float8(DataType::kFloat8E4M3FN, {}, {0});
  Tensor on = RunQuant1(Q({x, ScalarF32(1), zp}, 19));
  ASSERT_EQ(on.dtype(), DataType::kFloat8E4M3FN);
  // 448 = 0x7E; 0.3 -> 0.3125 = 0x2A (round to nearest even of 0.28125..0.3125 grid); 1 = 0x38.
  EXPECT_EQ(Bits(on), (std::vector<uint8_t>{0x7E, 0xFE, 0x2A, 0x38}));
  Tensor off = RunQuant1(Q({x, ScalarF32(1), zp}, 19, {Attribute::Int("saturate", 0)}));
  EXPECT_EQ(Bits(off), (std::vector<uint8_t>{0x7F, 0xFF, 0x2A, 0x38}));  // NaN when out of range

  Tensor x5 = F32({2}, {100000, 3});
  Tensor zp5 = Float8(DataType::kFloat8E5M2, {}, {0});
  EXPECT_EQ(Bits(RunQuant1(Q({x5, ScalarF32(1), zp5}, 19))), (std::vector<uint8_t>{0x7B, 0x42}));
  EXPECT_EQ(Bits(RunQuant1(Q({x5, ScalarF32(1), zp5}, 19, {Attribute::Int("saturate", 0)}))),
            (std::vector<uint8_t>{0x7C, 0x42}));  // +inf
  // float8 needs opset 19.
  EXPECT_EQ(CodeOf(Q({x, ScalarF32(1), zp}, 13)), StatusCode::kInvalidArgument);
}

TEST(QuantizeLinearTest, Float16InputAndScale) {
  // Opset 19: x and y_scale share float16. 1.25 / 0.5 = 2.5 -> 2.
  Tensor y = RunQuant1(
      Q({Half({3}, {1.0f, 1.25f, -3.0f}), Half({}, {0.5f}), Tensor::Scalar<int8_t>(0)}, 19));
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{2, 2, -6}));
  Tensor yb = RunQuant1(Q(
      {Half({2}, {3.0f, -1.0f}, DataType::kBfloat16), Half({}, {2.0f}, DataType::kBfloat16)}, 19));
  EXPECT_EQ(Values<uint8_t>(yb), (std::vector<uint8_t>{2, 0}));  // 1.5 -> 2, -0.5 -> 0
  // Opset 19 rejects mixed types; opset 21 allows them; opset 13 knows no float16.
  Tensor mixed_x = Half({1}, {3.0f});
  EXPECT_EQ(CodeOf(Q({mixed_x, ScalarF32(2)}, 19)), StatusCode::kInvalidArgument);
  EXPECT_EQ(Values<uint8_t>(RunQuant1(Q({mixed_x, ScalarF32(2)}, 21))), (std::vector<uint8_t>{2}));
  EXPECT_EQ(CodeOf(Q({mixed_x, Half({}, {2.0f})}, 13)), StatusCode::kInvalidArgument);
}

TEST(QuantizeLinearTest, ZeroNegativeOrNonFiniteScaleIsInvalid) {
  for (float s : {0.0f, -1.0f, INFINITY, NAN}) {
    OpCall call = Q({F32({1}, {1}), ScalarF32(s)});
    call.name = "q_bad_scale";
    auto result = RunOp(call);
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << s;
    EXPECT_NE(result.status().ToString().find("q_bad_scale"), std::string::npos);
  }
  EXPECT_EQ(CodeOf(Q({F32({2}, {1, 2}), F32({2}, {1, 0})}, 13, {Attribute::Int("axis", 0)})),
            StatusCode::kInvalidArgument);
}

TEST(QuantizeLinearTest, WrongTypesAreInvalid) {
  EXPECT_EQ(CodeOf(Q({U8({1}, {1}), ScalarF32(1)})), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Q({F32({1}, {1}), I32({}, {1})})), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Q({F32({1}, {1}), ScalarF32(1), I32({}, {0})})), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Q({F32({1}, {1})})), StatusCode::kInvalidArgument);  // no scale
}

// ------------------------------------------------------------------ DequantizeLinear

TEST(DequantizeLinearTest, PerTensorUint8AndInt8) {
  Tensor y = RunQuant1(DQ({U8({3}, {0, 128, 255}), ScalarF32(0.5f), Tensor::Scalar<uint8_t>(128)}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{-64, 0, 63.5f}));
  Tensor y8 = RunQuant1(DQ({I8({2}, {-128, 127}), ScalarF32(2)}, 10));
  EXPECT_EQ(Values<float>(y8), (std::vector<float>{-256, 254}));
}

TEST(DequantizeLinearTest, Int32NeedsAZeroZeroPoint) {
  Tensor y = RunQuant1(DQ({I32({2}, {-3, 5}), ScalarF32(2)}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{-6, 10}));
  EXPECT_EQ(CodeOf(DQ({I32({2}, {-3, 5}), ScalarF32(2), I32({}, {1})})),
            StatusCode::kInvalidArgument);
}

TEST(DequantizeLinearTest, PerAxisOnAxis0And1) {
  Tensor x = I8({2, 2}, {1, 2, 3, 4});
  Tensor y0 =
      RunQuant1(DQ({x, F32({2}, {1, 10}), I8({2}, {1, -1})}, 13, {Attribute::Int("axis", 0)}));
  EXPECT_EQ(Values<float>(y0), (std::vector<float>{0, 1, 40, 50}));
  Tensor y1 = RunQuant1(DQ({x, F32({2}, {1, 10}), I8({2}, {1, -1})}));
  EXPECT_EQ(Values<float>(y1), (std::vector<float>{0, 30, 2, 50}));
  EXPECT_EQ(CodeOf(DQ({x, F32({3}, {1, 1, 1})})), StatusCode::kInvalidArgument);
}

TEST(DequantizeLinearTest, Blocked) {
  Tensor y = RunQuant1(DQ({I8({1, 4}, {1, 2, 3, 4}), F32({1, 2}, {1, 2}), I8({1, 2}, {0, 1})}, 21,
                          {Attribute::Int("block_size", 2)}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1, 2, 4, 6}));
}

TEST(DequantizeLinearTest, Int16AndUint16) {
  Tensor y =
      RunQuant1(DQ({I16({2}, {-32768, 32767}), ScalarF32(1), Tensor::Scalar<int16_t>(-1)}, 21));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{-32767, 32768}));
  Tensor yu = RunQuant1(DQ({U16({1}, {65535}), ScalarF32(0.5f)}, 21));
  EXPECT_EQ(Values<float>(yu), (std::vector<float>{32767.5f}));
  EXPECT_EQ(CodeOf(DQ({U16({1}, {1}), ScalarF32(1)}, 19)), StatusCode::kInvalidArgument);
}

TEST(DequantizeLinearTest, Float16ScaleGivesFloat16Output) {
  Tensor y = RunQuant1(DQ({U8({2}, {10, 3}), Half({}, {0.5f})}, 19));
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_EQ(HalfValues(y), (std::vector<float>{5.0f, 1.5f}));
  Tensor yb = RunQuant1(DQ({U8({1}, {3}), Half({}, {0.25f}, DataType::kBfloat16)}, 21));
  EXPECT_EQ(yb.dtype(), DataType::kBfloat16);
  // Before opset 19 the scale is float32 only.
  EXPECT_EQ(CodeOf(DQ({U8({1}, {3}), Half({}, {0.5f})}, 13)), StatusCode::kInvalidArgument);
}

TEST(DequantizeLinearTest, Float8Input) {
  // e4m3fn 0x7E = 448, 0xC0 = -2; e5m2 0x42 = 3.
  Tensor y = RunQuant1(DQ({Float8(DataType::kFloat8E4M3FN, {2}, {0x7E, 0xC0}), ScalarF32(2)}, 19));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{896, -4}));
  Tensor y5 = RunQuant1(DQ({Float8(DataType::kFloat8E5M2, {1}, {0x42}), ScalarF32(0.5f),
                            Float8(DataType::kFloat8E5M2, {}, {0})},
                           21));
  EXPECT_EQ(Values<float>(y5), (std::vector<float>{1.5f}));
  EXPECT_EQ(CodeOf(DQ({Float8(DataType::kFloat8E4M3FN, {1}, {0x38}), ScalarF32(1)}, 13)),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(DQ({Float8(DataType::kFloat8E4M3FNUZ, {1}, {0x38}), ScalarF32(1)}, 19)),
            StatusCode::kUnimplemented);
}

TEST(DequantizeLinearTest, MalformedInputsAreInvalid) {
  EXPECT_EQ(CodeOf(DQ({U8({1}, {1}), ScalarF32(1), Tensor::Scalar<int8_t>(0)})),
            StatusCode::kInvalidArgument);  // zero point type differs from x
  EXPECT_EQ(CodeOf(DQ({F32({1}, {1}), ScalarF32(1)})), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(DQ({U8({1}, {1}), ScalarF32(NAN)})), StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------ DynamicQuantizeLinear

std::vector<Tensor> RunDynamic(Tensor x) {
  auto out = RunQuant({.op_type = "DynamicQuantizeLinear",
                       .inputs = {std::move(x)},
                       .opset = 11,
                       .num_outputs = 3});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : std::vector<Tensor>(3);
}

TEST(DynamicQuantizeLinearTest, RangeIncludesZero) {
  // min -3, max 2: scale 5/255, zero point round(3 / (5/255)) = 153.
  std::vector<Tensor> out = RunDynamic(F32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f}));
  EXPECT_FLOAT_EQ(Values<float>(out[1])[0], 5.0f / 255.0f);
  EXPECT_EQ(Values<uint8_t>(out[2]), (std::vector<uint8_t>{153}));
  EXPECT_EQ(Values<uint8_t>(out[0]), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  // All positive: the minimum becomes 0, so the zero point is 0.
  out = RunDynamic(F32({3}, {1, 2, 5.1f}));
  EXPECT_FLOAT_EQ(Values<float>(out[1])[0], 0.02f);
  EXPECT_EQ(Values<uint8_t>(out[2]), (std::vector<uint8_t>{0}));
  EXPECT_EQ(Values<uint8_t>(out[0]), (std::vector<uint8_t>{50, 100, 255}));
}

TEST(DynamicQuantizeLinearTest, ZeroPointRoundsToNearest) {
  // min -1, max 3: scale 4/255, -min / scale = 63.75 -> 64 (not truncated to 63).
  std::vector<Tensor> out = RunDynamic(F32({3}, {-1, 3, 0.5f}));
  EXPECT_FLOAT_EQ(Values<float>(out[1])[0], 4.0f / 255.0f);
  EXPECT_EQ(Values<uint8_t>(out[2]), (std::vector<uint8_t>{64}));
  EXPECT_EQ(Values<uint8_t>(out[0]), (std::vector<uint8_t>{0, 255, 96}));  // -64, 191, 32
}

TEST(DynamicQuantizeLinearTest, AllZeroInputHasZeroScale) {
  std::vector<Tensor> out = RunDynamic(F32({2}, {0, 0}));
  EXPECT_EQ(Values<float>(out[1]), (std::vector<float>{0}));
  EXPECT_EQ(Values<uint8_t>(out[2]), (std::vector<uint8_t>{0}));
  EXPECT_EQ(Values<uint8_t>(out[0]), (std::vector<uint8_t>{0, 0}));
}

TEST(DynamicQuantizeLinearTest, NanOrNonFloatIsInvalid) {
  OpCall call{.op_type = "DynamicQuantizeLinear",
              .inputs = {F32({2}, {1, NAN})},
              .opset = 11,
              .num_outputs = 3};
  EXPECT_EQ(CodeOf(call), StatusCode::kInvalidArgument);
  call.inputs = {U8({1}, {1})};
  EXPECT_EQ(CodeOf(call), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qtune::runtime::testing
