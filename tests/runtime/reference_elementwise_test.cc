// Reference elementwise kernels: unary math, binary ops with broadcasting, Where, Clip,
// Cast. Expected values are computed by hand or by an independent scalar formula.
#include <cmath>
#include <functional>
#include <limits>

#include "reference_test_util.h"

namespace qtune::runtime::testing {
namespace {

constexpr int64_t kOddSizes[] = {1, 2, 3, 5, 7, 15, 17, 33};

struct UnaryCase {
  std::string op;
  std::vector<Attribute> attributes;
  std::function<double(double)> expected;
};

// Values that hit negative, zero, fractional and large-magnitude inputs; kept positive
// for Log/Sqrt.
std::vector<float> SweepValues(int64_t n, bool positive_only) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) {
    float x =
        -4.0f + 8.0f * static_cast<float>(i) / static_cast<float>(std::max<int64_t>(n - 1, 1));
    v[i] = positive_only ? std::abs(x) + 0.25f : x;
  }
  return v;
}

TEST(ReferenceUnaryTest, FloatOpsMatchScalarFormulasAtOddSizes) {
  const double sqrt2 = std::sqrt(2.0);
  const std::vector<UnaryCase> cases = {
      {"Relu", {}, [](double x) { return x > 0 ? x : 0; }},
      {"LeakyRelu",
       {Attribute::Float("alpha", 0.1f)},
       [](double x) { return x < 0 ? 0.1 * x : x; }},
      {"LeakyRelu", {}, [](double x) { return x < 0 ? 0.01 * x : x; }},
      {"Sigmoid", {}, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"HardSigmoid", {}, [](double x) { return std::clamp(0.2 * x + 0.5, 0.0, 1.0); }},
      {"HardSwish", {}, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }},
      {"Tanh", {}, [](double x) { return std::tanh(x); }},
      {"Erf", {}, [](double x) { return std::erf(x); }},
      {"Gelu", {}, [&](double x) { return 0.5 * x * (1 + std::erf(x / sqrt2)); }},
      {"Gelu",
       {Attribute::String("approximate", "tanh")},
       [](double x) {
         return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
       }},
      {"Exp", {}, [](double x) { return std::exp(x); }},
      {"Abs", {}, [](double x) { return std::abs(x); }},
      {"Neg", {}, [](double x) { return -x; }},
      {"Floor", {}, [](double x) { return std::floor(x); }},
      {"Ceil", {}, [](double x) { return std::ceil(x); }},
      {"Sign", {}, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }},
      {"Softplus", {}, [](double x) { return std::log(std::exp(x) + 1); }},
      {"Softsign", {}, [](double x) { return x / (1 + std::abs(x)); }},
      {"Elu",
       {Attribute::Float("alpha", 0.5f)},
       [](double x) { return x < 0 ? 0.5 * (std::exp(x) - 1) : x; }},
      {"Selu",
       {},
       [](double x) {
         const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
         return x <= 0 ? g * (a * std::exp(x) - a) : g * x;
       }},
      {"Sin", {}, [](double x) { return std::sin(x); }},
      {"Cos", {}, [](double x) { return std::cos(x); }},
      {"Identity", {}, [](double x) { return x; }},
      {"Sinh", {}, [](double x) { return std::sinh(x); }},
      {"Asinh", {}, [](double x) { return std::asinh(x); }},
      {"Mish", {}, [](double x) { return x * std::tanh(std::log(1 + std::exp(x))); }},
  };
  const std::vector<UnaryCase> positive_cases = {
      {"Log", {}, [](double x) { return std::log(x); }},
      {"Sqrt", {}, [](double x) { return std::sqrt(x); }},
      {"Reciprocal", {}, [](double x) { return 1 / x; }},
  };
  for (bool positive : {false, true}) {
    for (const UnaryCase& c : positive ? positive_cases : cases) {
      for (int64_t n : kOddSizes) {
        std::vector<float> x = SweepValues(n, positive);
        Tensor y = Run1({.op_type = c.op, .inputs = {F32({n}, x)}, .attributes = c.attributes});
        ASSERT_EQ(y.sizes(), std::vector<int64_t>{n}) << c.op;
        for (int64_t i = 0; i < n; ++i) {
          const double want = c.expected(static_cast<double>(x[i]));
          EXPECT_NEAR(y.data<float>()[i], want, 1e-6 * std::max(1.0, std::abs(want)))
              << c.op << " x=" << x[i] << " n=" << n;
        }
      }
    }
  }
}

TEST(ReferenceUnaryTest, RoundHalvesToEven) {
  Tensor y =
      Run1({.op_type = "Round", .inputs = {F32({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f})}});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{0, 2, 2, -0.0f, -2, 2}));
}

TEST(ReferenceUnaryTest, IntegerReluAbsNegKeepTheirType) {
  Tensor relu = Run1({.op_type = "Relu", .inputs = {I32({4}, {-3, 0, 5, -1})}});
  EXPECT_EQ(relu.dtype(), DataType::kInt32);
  EXPECT_EQ(Values<int32_t>(relu), (std::vector<int32_t>{0, 0, 5, 0}));
  Tensor abs = Run1({.op_type = "Abs", .inputs = {Tensor::FromVector<int8_t>({3}, {-128, -5, 7})}});
  EXPECT_EQ(Values<int8_t>(abs), (std::vector<int8_t>{-128, 5, 7}));  // wraps like C
  Tensor neg = Run1({.op_type = "Neg", .inputs = {I64({2}, {4, -9})}});
  EXPECT_EQ(Values<int64_t>(neg), (std::vector<int64_t>{-4, 9}));
}

TEST(ReferenceUnaryTest, NotAndFloatOpOnIntegerIsUnimplemented) {
  Tensor y = Run1({.op_type = "Not", .inputs = {Bool({3}, {true, false, true})}});
  EXPECT_EQ(Values<bool>(y), (std::vector<bool>{false, true, false}));
  auto bad = RunOp({.op_type = "Sigmoid", .inputs = {I32({1}, {1})}, .name = "sig"});
  EXPECT_EQ(bad.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(bad.status().message().find("Sigmoid 'sig'"), std::string::npos);
}

TEST(ReferenceUnaryTest, GeluRejectsUnknownApproximation) {
  auto bad = RunOp({.op_type = "Gelu",
                    .inputs = {F32({1}, {1})},
                    .attributes = {Attribute::String("approximate", "fast")},
                    .opset = 20});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceBinaryTest, BroadcastsScalarRankMismatchAndSizeOneDims) {
  // scalar
  Tensor y = Run1({.op_type = "Add", .inputs = {F32({2, 2}, {1, 2, 3, 4}), F32({}, {10})}});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{11, 12, 13, 14}));
  // rank mismatch: [2,3] - [3]
  y = Run1({.op_type = "Sub", .inputs = {Iota({2, 3}), F32({3}, {1, 2, 3})}});
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{-1, -1, -1, 2, 2, 2}));
  // size-1 dims on both sides: [3,1] * [1,4] -> [3,4]
  y = Run1({.op_type = "Mul", .inputs = {F32({3, 1}, {1, 2, 3}), F32({1, 4}, {1, 10, 100, 1000})}});
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(Values<float>(y),
            (std::vector<float>{1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000}));
  // scalar on the left
  y = Run1({.op_type = "Div", .inputs = {F32({}, {1}), F32({2}, {2, 4})}});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{0.5f, 0.25f}));
}

TEST(ReferenceBinaryTest, BroadcastMatchesIndexFormulaAtOddSizes) {
  for (int64_t m : kOddSizes) {
    for (int64_t n : {1, 3, 17}) {
      Tensor a = Iota({m, 1, n});
      Tensor b = Iota({2, n}, 100);  // broadcast to [m, 2, n]
      Tensor y = Run1({.op_type = "Add", .inputs = {a, b}});
      ASSERT_EQ(y.sizes(), (std::vector<int64_t>{m, 2, n}));
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < 2; ++j) {
          for (int64_t k = 0; k < n; ++k) {
            float want = static_cast<float>(i * n + k) + 100 + static_cast<float>(j * n + k);
            ASSERT_EQ(y.data<float>()[(i * 2 + j) * n + k], want) << m << "," << n;
          }
        }
      }
    }
  }
}

TEST(ReferenceBinaryTest, IncompatibleBroadcastIsInvalidArgumentNamingTheNode) {
  auto bad = RunOp({.op_type = "Add", .inputs = {Iota({2, 3}), Iota({4})}, .name = "bad_add"});
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Add 'bad_add'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("[2x3]"), std::string::npos) << bad.status().message();
}

TEST(ReferenceBinaryTest, MismatchedTypesAreRejected) {
  auto bad = RunOp({.op_type = "Mul", .inputs = {Iota({2}), I64({2}, {1, 2})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceBinaryTest, IntegerDivTruncatesAndDivisionByZeroFails) {
  Tensor y =
      Run1({.op_type = "Div", .inputs = {I64({4}, {7, -7, 7, -7}), I64({4}, {2, 2, -2, -2})}});
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{3, -3, -3, 3}));
  auto bad = RunOp({.op_type = "Div", .inputs = {I32({2}, {1, 2}), I32({2}, {1, 0})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceBinaryTest, IntegerAddWrapsInsteadOfOverflowing) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  Tensor y = Run1({.op_type = "Add", .inputs = {I64({1}, {max}), I64({1}, {1})}});
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
}

TEST(ReferenceBinaryTest, ModFollowsDivisorSignUnlessFmod) {
  Tensor a = I32({4}, {5, -5, 5, -5}), b = I32({4}, {3, 3, -3, -3});
  EXPECT_EQ(Values<int32_t>(Run1({.op_type = "Mod", .inputs = {a, b}})),
            (std::vector<int32_t>{2, 1, -1, -2}));
  EXPECT_EQ(Values<int32_t>(Run1(
                {.op_type = "Mod", .inputs = {a, b}, .attributes = {Attribute::Int("fmod", 1)}})),
            (std::vector<int32_t>{2, -2, 2, -2}));
  EXPECT_EQ(Values<float>(Run1({.op_type = "Mod",
                                .inputs = {F32({2}, {5.5f, -5.5f}), F32({}, {2})},
                                .attributes = {Attribute::Int("fmod", 1)}})),
            (std::vector<float>{1.5f, -1.5f}));
  auto bad = RunOp({.op_type = "Mod", .inputs = {F32({1}, {1}), F32({1}, {2})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceBinaryTest, PowKeepsTheBaseTypeWithMixedExponents) {
  Tensor y = Run1({.op_type = "Pow", .inputs = {F32({3}, {2, 3, 4}), F32({}, {2})}});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{4, 9, 16}));
  y = Run1({.op_type = "Pow", .inputs = {F32({2}, {2, 9}), I64({2}, {3, 0})}});
  EXPECT_EQ(y.dtype(), DataType::kFloat32);
  EXPECT_EQ(Values<float>(y), (std::vector<float>{8, 1}));
  y = Run1({.op_type = "Pow", .inputs = {I64({3}, {2, -3, 7}), I64({3}, {10, 3, 0})}});
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{1024, -27, 1}));
  y = Run1({.op_type = "Pow", .inputs = {I32({2}, {4, 9}), F32({}, {0.5f})}});
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{2, 3}));
}

TEST(ReferenceBinaryTest, VariadicOpsBroadcastAllInputs) {
  Tensor a = F32({2, 1}, {1, 6}), b = F32({3}, {2, 5, 9}), c = F32({}, {4});
  EXPECT_EQ(Values<float>(Run1({.op_type = "Sum", .inputs = {a, b, c}})),
            (std::vector<float>{7, 10, 14, 12, 15, 19}));
  EXPECT_EQ(Values<float>(Run1({.op_type = "Max", .inputs = {a, b, c}})),
            (std::vector<float>{4, 5, 9, 6, 6, 9}));
  EXPECT_EQ(Values<float>(Run1({.op_type = "Min", .inputs = {a, b, c}})),
            (std::vector<float>{1, 1, 1, 2, 4, 4}));
  EXPECT_EQ(
      Values<float>(Run1({.op_type = "Mean", .inputs = {F32({2}, {1, 2}), F32({2}, {3, 7})}})),
      (std::vector<float>{2, 4.5f}));
  EXPECT_EQ(Values<float>(Run1({.op_type = "Sum", .inputs = {F32({2}, {1, 2})}})),
            (std::vector<float>{1, 2}));
  Tensor nan = Run1({.op_type = "Max", .inputs = {F32({2}, {NAN, 1}), F32({2}, {0, NAN})}});
  EXPECT_TRUE(std::isnan(nan.data<float>()[0]) && std::isnan(nan.data<float>()[1]));
  EXPECT_EQ(Values<int64_t>(Run1({.op_type = "Max", .inputs = {I64({2}, {-4, 3}), I64({}, {0})}})),
            (std::vector<int64_t>{0, 3}));
}

TEST(ReferenceBinaryTest, ComparisonsAndLogicProduceBool) {
  Tensor a = I64({2, 2}, {1, 2, 3, 4}), b = I64({2}, {2, 2});
  auto check = [&](const std::string& op, std::vector<bool> want) {
    Tensor y = Run1({.op_type = op, .inputs = {a, b}});
    EXPECT_EQ(y.dtype(), DataType::kBool) << op;
    EXPECT_EQ(Values<bool>(y), want) << op;
  };
  check("Equal", {false, true, false, false});
  check("Less", {true, false, false, false});
  check("LessOrEqual", {true, true, false, false});
  check("Greater", {false, false, true, true});
  check("GreaterOrEqual", {false, true, true, true});
  Tensor p = Bool({4}, {true, true, false, false}), q = Bool({4}, {true, false, true, false});
  EXPECT_EQ(Values<bool>(Run1({.op_type = "And", .inputs = {p, q}})),
            (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(Values<bool>(Run1({.op_type = "Or", .inputs = {p, q}})),
            (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(Values<bool>(Run1({.op_type = "Xor", .inputs = {p, q}})),
            (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(Values<bool>(Run1({.op_type = "Less", .inputs = {F32({2}, {0.5f, 2}), F32({}, {1})}})),
            (std::vector<bool>{true, false}));
}

TEST(ReferenceBinaryTest, PReluBroadcastsSlopePerChannel) {
  Tensor x = F32({1, 2, 1, 2}, {-1, 2, -3, 4});
  Tensor slope = F32({2, 1, 1}, {0.5f, 0.25f});
  EXPECT_EQ(Values<float>(Run1({.op_type = "PRelu", .inputs = {x, slope}})),
            (std::vector<float>{-0.5f, 2, -0.75f, 4}));
}

TEST(ReferenceSelectTest, WhereBroadcastsAllThreeInputs) {
  Tensor cond = Bool({2, 1}, {true, false});
  Tensor y = Run1({.op_type = "Where", .inputs = {cond, F32({1, 3}, {1, 2, 3}), F32({}, {-1})}});
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1, 2, 3, -1, -1, -1}));
  Tensor yi =
      Run1({.op_type = "Where",
            .inputs = {Bool({3}, {false, true, false}), I64({3}, {1, 2, 3}), I64({3}, {7, 8, 9})}});
  EXPECT_EQ(Values<int64_t>(yi), (std::vector<int64_t>{7, 2, 9}));
}

TEST(ReferenceSelectTest, ClipTakesAttributesBeforeOpset11AndInputsAfter) {
  Tensor x = F32({5}, {-2, -0.5f, 0, 0.5f, 2});
  Tensor v6 = Run1({.op_type = "Clip",
                    .inputs = {x},
                    .attributes = {Attribute::Float("min", -1), Attribute::Float("max", 1)},
                    .opset = 6});
  EXPECT_EQ(Values<float>(v6), (std::vector<float>{-1, -0.5f, 0, 0.5f, 1}));
  Tensor v13 = Run1({.op_type = "Clip", .inputs = {x, Tensor(), F32({}, {0.25f})}, .opset = 13});
  EXPECT_EQ(Values<float>(v13), (std::vector<float>{-2, -0.5f, 0, 0.25f, 0.25f}));
  Tensor none = Run1({.op_type = "Clip", .inputs = {x}, .opset = 13});
  EXPECT_EQ(Values<float>(none), Values<float>(x));
  Tensor ints =
      Run1({.op_type = "Clip", .inputs = {I32({3}, {-9, 5, 9}), I32({}, {0}), I32({}, {6})}});
  EXPECT_EQ(Values<int32_t>(ints), (std::vector<int32_t>{0, 5, 6}));
}

Tensor CastTo(const Tensor& x, DataType to, std::vector<Attribute> extra = {}) {
  extra.push_back(Attribute::Int("to", static_cast<int64_t>(to)));
  return Run1({.op_type = "Cast", .inputs = {x}, .attributes = extra, .opset = 19});
}

TEST(ReferenceCastTest, FloatToIntegerTruncatesAndSaturates) {
  Tensor y = CastTo(F32({4}, {1.7f, -1.7f, 3e10f, NAN}), DataType::kInt32);
  EXPECT_EQ(Values<int32_t>(y),
            (std::vector<int32_t>{1, -1, std::numeric_limits<int32_t>::max(), 0}));
}

TEST(ReferenceCastTest, IntegerToIntegerWrapsAndBoolIsNonZero) {
  Tensor y = CastTo(I64({2}, {(int64_t{1} << 32) + 5, -1}), DataType::kInt32);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{5, -1}));
  Tensor b = CastTo(F32({3}, {0, -0.5f, 2}), DataType::kBool);
  EXPECT_EQ(Values<bool>(b), (std::vector<bool>{false, true, true}));
  Tensor f = CastTo(Bool({2}, {true, false}), DataType::kFloat32);
  EXPECT_EQ(Values<float>(f), (std::vector<float>{1, 0}));
}

TEST(ReferenceCastTest, NarrowFloatsRoundTripAndComputeThroughFloat32) {
  Tensor h = CastTo(F32({3}, {1.0f, -2.0f, 0.1f}), DataType::kFloat16);
  ASSERT_EQ(h.dtype(), DataType::kFloat16);
  EXPECT_EQ(static_cast<const uint16_t*>(h.raw_data())[0], 0x3C00);
  EXPECT_EQ(static_cast<const uint16_t*>(h.raw_data())[1], 0xC000);
  Tensor back = CastTo(h, DataType::kFloat32);
  EXPECT_NEAR(back.data<float>()[2], 0.1f, 1e-4);
  // float16 arithmetic via the float32 path.
  Tensor sum = Run1({.op_type = "Add", .inputs = {h, h}});
  ASSERT_EQ(sum.dtype(), DataType::kFloat16);
  EXPECT_EQ(Values<float>(CastTo(sum, DataType::kFloat32))[1], -4.0f);
  Tensor bf = CastTo(F32({1}, {1.0f}), DataType::kBfloat16);
  EXPECT_EQ(static_cast<const uint16_t*>(bf.raw_data())[0], 0x3F80);
}

TEST(ReferenceCastTest, Float8FollowsSaturate) {
  Tensor sat = CastTo(F32({2}, {1000, -1000}), DataType::kFloat8E4M3FN);
  Tensor back = CastTo(sat, DataType::kFloat32);
  EXPECT_EQ(Values<float>(back), (std::vector<float>{448, -448}));
  Tensor nosat = CastTo(F32({1}, {1000}), DataType::kFloat8E4M3FN, {Attribute::Int("saturate", 0)});
  EXPECT_TRUE(std::isnan(Values<float>(CastTo(nosat, DataType::kFloat32))[0]));
}

TEST(ReferenceCastTest, CastLikeTakesTheSecondInputsType) {
  Tensor y =
      Run1({.op_type = "CastLike", .inputs = {F32({2}, {2.9f, -3}), I64({1}, {0})}, .opset = 15});
  EXPECT_EQ(y.dtype(), DataType::kInt64);
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{2, -3}));
}

TEST(ReferenceCastTest, UnknownTargetTypeIsRejected) {
  auto bad = RunOp(
      {.op_type = "Cast", .inputs = {F32({1}, {1})}, .attributes = {Attribute::Int("to", 99)}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qtune::runtime::testing
