// ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul reference kernels (and their
// shape functions, which RunQuant checks on every successful call): hand-computed cases,
// per-channel / per-row / per-column parameters, and malformed inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "reference_quant_test_util.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::testing {
namespace {

OpCall Call(std::string op, std::vector<Tensor> inputs, std::vector<Attribute> attrs = {},
            int64_t opset = 13) {
  return {
      .op_type = std::move(op), .inputs = std::move(inputs), .attributes = attrs, .opset = opset};
}

TEST(QuantRegistryTest, EveryQuantizationOpHasAKernelAndAShapeFunction) {
  for (const char* op : {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
                         "ConvInteger", "MatMulInteger", "QLinearConv", "QLinearMatMul"}) {
    EXPECT_NE(ReferenceRegistry::Get().Find(op), nullptr) << op;
    EXPECT_NE(ShapeRegistry::Get().Find(op), nullptr) << op;
  }
}

// ------------------------------------------------------------------ ConvInteger

TEST(ConvIntegerTest, SubtractsZeroPointsBeforeMultiplying) {
  // x - 1 = 1..9 in a 3x3 plane, 2x2 kernel of ones: window sums.
  Tensor x = U8({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  Tensor w = U8({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor y = RunQuant1(Call("ConvInteger", {x, w, Tensor::Scalar<uint8_t>(1)}));
  ASSERT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{12, 16, 24, 28}));
}

TEST(ConvIntegerTest, PaddingActsAsTheZeroPoint) {
  Tensor x = U8({1, 1, 2, 2}, {11, 12, 13, 14});  // x - 10 = 1 2 3 4
  Tensor w = U8({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor y = RunQuant1(Call("ConvInteger", {x, w, Tensor::Scalar<uint8_t>(10)},
                            {Attribute::Ints("pads", {1, 1, 1, 1})}));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
}

TEST(ConvIntegerTest, PerOutputChannelWeightZeroPointsAndInt8) {
  Tensor x = I8({1, 1, 1, 2}, {-3, 4});
  Tensor w = I8({2, 1, 1, 1}, {5, -2});
  // Channel 0: (x) * (5 - 2) ; channel 1: (x) * (-2 - -4).
  Tensor y = RunQuant1(Call("ConvInteger", {x, w, Tensor(), I8({2}, {2, -4})}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{-9, 12, -6, 8}));
}

TEST(ConvIntegerTest, Grouped) {
  Tensor x = U8({1, 2, 1, 1}, {3, 5});
  Tensor w = U8({2, 1, 1, 1}, {2, 7});
  Tensor y = RunQuant1(Call("ConvInteger", {x, w}, {Attribute::Int("group", 2)}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{6, 35}));
}

TEST(ConvIntegerTest, MalformedInputsAreInvalid) {
  Tensor x = U8({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor w = U8({1, 1, 1, 1}, {1});
  EXPECT_EQ(CodeOf(Call("ConvInteger", {F32({1, 1, 2, 2}, {1, 2, 3, 4}), w})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Call("ConvInteger", {x, w, Tensor::Scalar<int8_t>(0)})),
            StatusCode::kInvalidArgument);  // zero point type differs from x
  EXPECT_EQ(CodeOf(Call("ConvInteger", {x, w, Tensor(), U8({3}, {0, 0, 0})})),
            StatusCode::kInvalidArgument);  // 3 zero points for 1 output channel
  EXPECT_EQ(CodeOf(Call("ConvInteger", {x, U8({1, 2, 1, 1}, {1, 1})})),
            StatusCode::kInvalidArgument);  // channels do not match
}

// ------------------------------------------------------------------ QLinearConv

TEST(QLinearConvTest, BiasScalesAndTiesRoundToEven) {
  // x - 10 = 0 10 20 30; w = 3; acc + B(4) = 4 34 64 94; * 0.5 * 0.25 = 0.5 4.25 8 11.75;
  // / y_scale 0.5 = 1 8.5 16 23.5 -> 1 8 16 24; + 100.
  Tensor y =
      RunQuant1(Call("QLinearConv", {U8({1, 1, 2, 2}, {10, 20, 30, 40}), ScalarF32(0.5f),
                                     Tensor::Scalar<uint8_t>(10), I8({1, 1, 1, 1}, {3}),
                                     ScalarF32(0.25f), Tensor::Scalar<int8_t>(0), ScalarF32(0.5f),
                                     Tensor::Scalar<uint8_t>(100), I32({1}, {4})}));
  ASSERT_EQ(y.dtype(), DataType::kUint8);
  EXPECT_EQ(Values<uint8_t>(y), (std::vector<uint8_t>{101, 108, 116, 124}));
}

TEST(QLinearConvTest, PerChannelWeightScalesAndSaturation) {
  Tensor x = I8({1, 1, 1, 2}, {1, 100});
  Tensor w = I8({2, 1, 1, 1}, {1, 1});
  Tensor y = RunQuant1(
      Call("QLinearConv", {x, ScalarF32(1), Tensor::Scalar<int8_t>(0), w, F32({2}, {1, 2}),
                           I8({2}, {0, 0}), ScalarF32(1), Tensor::Scalar<int8_t>(-1)}));
  ASSERT_EQ(y.dtype(), DataType::kInt8);
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{0, 99, 1, 127}));
}

TEST(QLinearConvTest, MalformedInputsAreInvalid) {
  std::vector<Tensor> good = {U8({1, 1, 1, 1}, {1}),
                              ScalarF32(1),
                              Tensor::Scalar<uint8_t>(0),
                              U8({1, 1, 1, 1}, {1}),
                              ScalarF32(1),
                              Tensor::Scalar<uint8_t>(0),
                              ScalarF32(1),
                              Tensor::Scalar<uint8_t>(0)};
  EXPECT_EQ(Values<uint8_t>(RunQuant1(Call("QLinearConv", good))), (std::vector<uint8_t>{1}));
  auto with = [&](size_t i, Tensor t) {
    std::vector<Tensor> in = good;
    if (i < in.size())
      in[i] = t;
    else
      in.push_back(t);
    return CodeOf(Call("QLinearConv", in));
  };
  EXPECT_EQ(with(1, ScalarF32(0)), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(4, ScalarF32(-1)), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(6, ScalarF32(NAN)), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(4, F32({2}, {1, 1})), StatusCode::kInvalidArgument);  // 2 scales, 1 channel
  EXPECT_EQ(with(7, I32({}, {0})), StatusCode::kInvalidArgument);      // y type int32
  EXPECT_EQ(with(8, F32({1}, {0})), StatusCode::kInvalidArgument);     // float bias
  EXPECT_EQ(CodeOf(Call("QLinearConv", {good.begin(), good.begin() + 7})),
            StatusCode::kInvalidArgument);  // no y_zero_point
}

// ------------------------------------------------------------------ MatMulInteger

TEST(MatMulIntegerTest, OnnxExample) {
  Tensor a = U8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
  Tensor b = U8({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor y = RunQuant1(
      Call("MatMulInteger", {a, b, Tensor::Scalar<uint8_t>(12), Tensor::Scalar<uint8_t>(0)}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
}

TEST(MatMulIntegerTest, PerRowAndPerColumnZeroPoints) {
  Tensor a = U8({2, 2}, {1, 2, 3, 4});
  Tensor b = U8({2, 2}, {5, 6, 7, 8});
  // a - [1; 3] = [[0 1] [0 1]]; b - [4 6] = [[1 0] [3 2]].
  Tensor y = RunQuant1(Call("MatMulInteger", {a, b, U8({2}, {1, 3}), U8({2}, {4, 6})}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{3, 2, 3, 2}));
  // The same as N-D [M, 1] and [1, N] zero points.
  Tensor y2 = RunQuant1(Call("MatMulInteger", {a, b, U8({2, 1}, {1, 3}), U8({1, 2}, {4, 6})}));
  EXPECT_EQ(Values<int32_t>(y2), (std::vector<int32_t>{3, 2, 3, 2}));
}

TEST(MatMulIntegerTest, BatchedZeroPointsAndBroadcastB) {
  // Two batches of A [1, 2]; per-batch-row zero points [2, 1, 1]; B [2, 1] broadcast.
  Tensor a = I8({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = I8({2, 1}, {1, 10});
  Tensor y = RunQuant1(Call("MatMulInteger", {a, b, I8({2, 1, 1}, {1, 3})}));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{10, 10}));  // (0,1)->10; (0,1)->10
}

TEST(MatMulIntegerTest, VectorOperandsAndMixedSigns) {
  Tensor y = RunQuant1(Call("MatMulInteger", {I8({3}, {-128, 127, 1}), U8({3}, {255, 255, 0})}));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{}));
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{-255}));
}

TEST(MatMulIntegerTest, MalformedInputsAreInvalid) {
  Tensor a = U8({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(CodeOf(Call("MatMulInteger", {a, U8({3, 1}, {1, 2, 3})})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Call("MatMulInteger", {a, a, U8({3}, {1, 2, 3})})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Call("MatMulInteger", {a, a, U8({1, 2}, {1, 2})})),
            StatusCode::kInvalidArgument);  // A's zero points must be [M, 1]
  EXPECT_EQ(CodeOf(Call("MatMulInteger", {a, a, Tensor(), I8({2}, {0, 0})})),
            StatusCode::kInvalidArgument);  // type differs from B
  EXPECT_EQ(CodeOf(Call("MatMulInteger", {I32({1, 1}, {1}), a})), StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------ QLinearMatMul

std::vector<Tensor> QLinearMatMulInputs(Tensor a, Tensor a_scale, Tensor b, Tensor b_scale,
                                        Tensor y_scale) {
  const bool a_signed = a.dtype() == DataType::kInt8, b_signed = b.dtype() == DataType::kInt8;
  return {a,
          a_scale,
          a_signed ? Tensor::Scalar<int8_t>(0) : Tensor::Scalar<uint8_t>(0),
          b,
          b_scale,
          b_signed ? Tensor::Scalar<int8_t>(0) : Tensor::Scalar<uint8_t>(0),
          y_scale,
          Tensor::Scalar<int8_t>(0)};
}

TEST(QLinearMatMulTest, TiesRoundToEven) {
  // [2 4] . [1 1] = 6 * 0.25 = 1.5 -> 2; [1 4] . [1 1] = 5 * 0.25 = 1.25 / 0.5 = 2.5 -> 2.
  Tensor b = I8({2, 1}, {1, 1});
  Tensor y =
      RunQuant1(Call("QLinearMatMul", QLinearMatMulInputs(I8({1, 2}, {2, 4}), ScalarF32(0.5f), b,
                                                          ScalarF32(0.5f), ScalarF32(1))));
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{2}));
  y = RunQuant1(Call("QLinearMatMul", QLinearMatMulInputs(I8({1, 2}, {1, 4}), ScalarF32(0.5f), b,
                                                          ScalarF32(0.5f), ScalarF32(0.5f))));
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{2}));
}

TEST(QLinearMatMulTest, PerRowAndPerColumnScales) {
  // a = [[1 1] [1 1]], b = identity; a_scale per row [1 2], b_scale per column [3 4].
  std::vector<Tensor> in =
      QLinearMatMulInputs(U8({2, 2}, {1, 1, 1, 1}), F32({2}, {1, 2}), U8({2, 2}, {1, 0, 0, 1}),
                          F32({2}, {3, 4}), ScalarF32(1));
  in[2] = U8({2}, {0, 0});
  in[5] = U8({1, 2}, {0, 0});
  Tensor y = RunQuant1(Call("QLinearMatMul", in));
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{3, 4, 6, 8}));
}

TEST(QLinearMatMulTest, Float16ScalesFromOpset21) {
  std::vector<Tensor> in = QLinearMatMulInputs(U8({1, 1}, {6}), Half({}, {0.5f}), U8({1, 1}, {2}),
                                               Half({}, {0.5f}), Half({}, {2.0f}));
  EXPECT_EQ(CodeOf(Call("QLinearMatMul", in, {}, 10)), StatusCode::kInvalidArgument);
  Tensor y = RunQuant1(Call("QLinearMatMul", in, {}, 21));
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{2}));  // 6 * 2 * 0.25 / 2 = 1.5 -> 2
}

TEST(QLinearMatMulTest, MalformedInputsAreInvalidOrUnimplemented) {
  std::vector<Tensor> good = QLinearMatMulInputs(U8({1, 1}, {1}), ScalarF32(1), U8({1, 1}, {1}),
                                                 ScalarF32(1), ScalarF32(1));
  auto with = [&](size_t i, Tensor t, int64_t opset = 13) {
    std::vector<Tensor> in = good;
    in[i] = t;
    return CodeOf(Call("QLinearMatMul", in, {}, opset));
  };
  EXPECT_EQ(with(1, ScalarF32(0)), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(6, ScalarF32(-2)), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(2, Tensor::Scalar<int8_t>(0)), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(4, F32({3}, {1, 1, 1})), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(6, F32({2}, {1, 1})), StatusCode::kInvalidArgument);  // y_scale not scalar
  EXPECT_EQ(with(0, Float8(DataType::kFloat8E4M3FN, {1, 1}, {0x38}), 21),
            StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace qtune::runtime::testing
