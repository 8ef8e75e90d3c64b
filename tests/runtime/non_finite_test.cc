// NaN and infinity through the engine (session.h, "NaN and infinity"): they propagate as
// in ONNX Runtime and numpy, through ReLU, pooling and clamps that oneDNN's max-based
// kernels would turn into numbers, per batch element; the check costs the fast path
// nothing but a pass over the inputs. QuantizeLinear of NaN gives the zero point
// (core/quant_math.h), which dequantizes to 0; ONNX Runtime 1.x gives 0 (the integer a
// NaN-to-int conversion happens to give on x86), which dequantizes to -zero_point * scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor Random(const std::vector<int64_t>& sizes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

// Conv -> Relu -> MaxPool -> Clip -> Flatten -> Gemm: every op family whose oneDNN
// kernel is max-based, over a batch of 2.
std::unique_ptr<ir::Graph> BuildConvNet() {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 3, 8, 8});
  ir::Value* w = b.Initializer("w", Random({8, 3, 3, 3}, 1));
  ir::Value* y = b.Op("Conv", {x, w}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})});
  y = b.Op("Relu", {y});
  y = b.Op("MaxPool", {y},
           {ir::Attribute::Ints("kernel_shape", {2, 2}), ir::Attribute::Ints("strides", {2, 2})});
  ir::Value* lo = b.Initializer("lo", Tensor::Scalar<float>(0.0f));
  ir::Value* hi = b.Initializer("hi", Tensor::Scalar<float>(6.0f));
  y = b.Op("Clip", {y, lo, hi});
  y = b.Op("Flatten", {y});
  ir::Value* g = b.Initializer("g", Random({8 * 4 * 4, 5}, 2));
  b.Output(b.Op("Gemm", {y, g}, {}, {.name = "fc", .output_names = {"logits"}}));
  return b.Build();
}

TEST(NonFiniteTest, NaNInOneSamplePropagatesToThatSampleOnly) {
  auto graph = BuildConvNet();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  Tensor x = Random({2, 3, 8, 8}, 3);
  auto clean = (*session)->Run({{"x", x}});
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();
  Tensor poisoned = x.Clone();
  poisoned.data<float>()[5] = kNaN;  // sample 0
  auto got = (*session)->Run({{"x", poisoned}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const Tensor& logits = (*got)[0].second;
  for (int64_t j = 0; j < 5; ++j) {
    EXPECT_TRUE(std::isnan(logits.data<float>()[j])) << "sample 0, logit " << j;
    EXPECT_NEAR(logits.data<float>()[5 + j], (*clean)[0].second.data<float>()[5 + j], 1e-4)
        << "sample 1 is untouched, logit " << j;
  }
  // The fast plan still serves clean inputs afterwards.
  auto again = (*session)->Run({{"x", x}});
  ASSERT_TRUE(again.ok());
  for (float v : (*again)[0].second.span<float>()) EXPECT_TRUE(std::isfinite(v));
}

TEST(NonFiniteTest, InfinityPropagatesThroughReluAndPooling) {
  auto graph = BuildConvNet();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok());
  Tensor x = Random({2, 3, 8, 8}, 4);
  for (int64_t i = 0; i < 3 * 8 * 8; ++i)
    x.data<float>()[i] = std::numeric_limits<float>::infinity();
  auto got = (*session)->Run({{"x", x}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  for (int64_t j = 0; j < 5; ++j) EXPECT_FALSE(std::isfinite((*got)[0].second.data<float>()[j]));
}

TEST(NonFiniteTest, MatchesOnnxRuntimeOnAnAllNaNInput) {
  if (!testing::OrtAvailable())
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  auto graph = BuildConvNet();
  std::string path = ::testing::TempDir() + "/non_finite_convnet.onnx";
  ASSERT_TRUE(ir::SaveModel(*graph, path).ok());
  Tensor x = Random({2, 3, 8, 8}, 5);
  for (float& v : x.span<float>()) v = kNaN;
  auto want = testing::RunOrt(path, {{"x", x}}, {"logits"});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok());
  auto got = (*session)->Run({{"x", x}});
  ASSERT_TRUE(got.ok());
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(std::isnan((*got)[0].second.data<float>()[i]),
              std::isnan((*want)[0].second.data<float>()[i]))
        << "logit " << i;
  }
}

// Log -> Relu -> MaxPool, and Div(a, b) -> Relu, with finite inputs: a NaN made by Log of a
// negative or by 0/0 must survive the max-based kernels after it (plan/non_finite.h).
std::unique_ptr<ir::Graph> BuildMadeInside() {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 2, 4, 4});
  ir::Value* y = b.Op("Log", {x}, {}, {.name = "log"});
  y = b.Op("Relu", {y});
  b.Output(
      b.Op("MaxPool", {y},
           {ir::Attribute::Ints("kernel_shape", {2, 2}), ir::Attribute::Ints("strides", {2, 2})},
           {.name = "pool", .output_names = {"pooled"}}));
  ir::Value* a = b.Input("a", DataType::kFloat32, {2, 8});
  ir::Value* d = b.Input("d", DataType::kFloat32, {2, 8});
  ir::Value* q = b.Op("Div", {a, d}, {}, {.name = "ratio"});
  ir::Value* six = b.Initializer("six", Tensor::Scalar<float>(6.0f));
  ir::Value* two = b.Initializer("two", Tensor::Scalar<float>(2.0f));
  q = b.Op("Pow", {b.Op("Div", {q, six}, {}, {.name = "by_six"}), two}, {}, {.name = "square"});
  b.Output(b.Op("Relu", {q}, {}, {.name = "relu", .output_names = {"ratio_relu"}}));
  return b.Build();
}

NamedTensors MadeInsideInputs() {
  Tensor x = Random({1, 2, 4, 4}, 6);
  for (float& v : x.span<float>()) v = std::fabs(v) + 0.5f;
  Tensor a = Random({2, 8}, 7);
  Tensor d = Random({2, 8}, 8);
  for (float& v : d.span<float>()) v = std::fabs(v) + 0.5f;
  return {{"x", x}, {"a", a}, {"d", d}};
}

TEST(NonFiniteTest, StepsThatCanMakeNaNFromFiniteInputsAreChecked) {
  auto graph = BuildMadeInside();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto plan = (*session)->Prepare({{"x", {1, 2, 4, 4}}, {"a", {2, 8}}, {"d", {2, 8}}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::map<std::string, bool> checked;
  for (const PlanStep& step : (*plan)->steps) checked[step.node_name] = step.check_non_finite;
  EXPECT_TRUE(checked.at("log"));
  EXPECT_TRUE(checked.at("ratio"));    // a divisor computed at run time
  EXPECT_FALSE(checked.at("by_six"));  // a constant divisor of magnitude >= 1
  EXPECT_FALSE(checked.at("square"));  // a non-negative integer exponent
  EXPECT_FALSE(checked.at("pool"));
}

TEST(NonFiniteTest, NaNMadeInsideTheGraphSurvivesReluAndPooling) {
  auto graph = BuildMadeInside();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  NamedTensors inputs = MadeInsideInputs();
  auto clean = (*session)->Run(inputs);
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();
  for (const auto& [name, t] : *clean) {
    for (float v : t.span<float>()) EXPECT_TRUE(std::isfinite(v)) << name;
  }
  inputs[0].second.data<float>()[0] = -1.0f;  // Log(-1): NaN in pooling window (0, 0)
  inputs[1].second.data<float>()[3] = 0.0f;   // 0 / 0
  inputs[2].second.data<float>()[3] = 0.0f;
  inputs[1].second.data<float>()[9] = 1.0f;  // 1 / 0: +inf
  inputs[2].second.data<float>()[9] = 0.0f;
  auto got = (*session)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const Tensor& pooled = (*got)[0].second;
  const Tensor& ratio = (*got)[1].second;
  EXPECT_TRUE(std::isnan(pooled.data<float>()[0]));
  // The run with a NaN inside is redone on the reference kernels: the other windows match
  // the fast kernels' clean run within rounding (the AVX-512 Log is within 2 ulp of logf).
  for (int64_t i = 1; i < pooled.num_elements(); ++i) {
    const float want = (*clean)[0].second.data<float>()[i];
    EXPECT_NEAR(pooled.data<float>()[i], want, 1e-6f * std::max(1.0f, std::fabs(want))) << i;
  }
  EXPECT_TRUE(std::isnan(ratio.data<float>()[3]));
  EXPECT_EQ(ratio.data<float>()[9], std::numeric_limits<float>::infinity());
  // Clean inputs afterwards get the clean outputs again.
  auto again = (*session)->Run(MadeInsideInputs());
  ASSERT_TRUE(again.ok());
  for (size_t o = 0; o < again->size(); ++o) {
    for (int64_t i = 0; i < (*again)[o].second.num_elements(); ++i) {
      EXPECT_EQ((*again)[o].second.data<float>()[i], (*clean)[o].second.data<float>()[i]);
    }
  }
  if (!testing::OrtAvailable())
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  std::string path = ::testing::TempDir() + "/non_finite_made_inside.onnx";
  ASSERT_TRUE(ir::SaveModel(*graph, path).ok());
  // ONNX Runtime's MaxPool (MLAS) drops a NaN that is not the window's maximum; qtune keeps
  // it as numpy does, so only Div -> Relu is compared.
  auto want = testing::RunOrt(path, inputs, {"ratio_relu"});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const Tensor& ort = (*want)[0].second;
  for (int64_t i = 0; i < ort.num_elements(); ++i) {
    const float w = ort.data<float>()[i];
    const float g = ratio.data<float>()[i];
    EXPECT_EQ(std::isnan(g), std::isnan(w)) << "element " << i;
    if (std::isinf(w)) {
      EXPECT_EQ(g, w) << "element " << i;
    } else if (!std::isnan(w)) {
      EXPECT_NEAR(g, w, 1e-5f * std::max(1.0f, std::fabs(w))) << "element " << i;
    }
  }
}

// Every float elementwise activation and math op keeps a NaN, on both tiers (the fast tier
// runs a NaN input on the reference kernels; session.h).
TEST(NonFiniteTest, EveryUnaryOpKeepsNaNOnBothTiers) {
  const char* ops[] = {"Relu", "LeakyRelu", "Sigmoid",  "HardSigmoid", "HardSwish",  "Tanh",
                       "Erf",  "Exp",       "Log",      "Sqrt",        "Reciprocal", "Floor",
                       "Ceil", "Round",     "Softplus", "Softsign",    "Elu",        "Selu",
                       "Celu", "Abs",       "Neg",      "Sin",         "Cos",        "Identity"};
  for (const char* op : ops) {
    ir::GraphBuilder b(17);
    ir::Value* x = b.Input("x", DataType::kFloat32, {1, 4, 2, 2});
    b.Output(b.Op(op, {x}, {}, {.name = "op", .output_names = {"y"}}));
    auto graph = b.Build();
    Tensor in = Random({1, 4, 2, 2}, 9);
    for (float& v : in.span<float>()) v = std::fabs(v) + 0.1f;  // in Log's and Sqrt's domain
    in.data<float>()[0] = kNaN;
    in.data<float>()[9] = kNaN;
    for (bool use_onednn : {true, false}) {
      SessionOptions options;
      options.use_onednn = use_onednn;
      auto session = Session::Create(*graph, options);
      ASSERT_TRUE(session.ok()) << op << ": " << session.status().ToString();
      auto got = (*session)->Run({{"x", in}});
      ASSERT_TRUE(got.ok()) << op << ": " << got.status().ToString();
      const float* y = (*got)[0].second.data<float>();
      EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[9]))
          << op << (use_onednn ? " (fast tier)" : " (reference tier)") << ": " << y[0] << ", "
          << y[9];
      EXPECT_FALSE(std::isnan(y[1])) << op;
    }
  }
}

// QuantizeLinear of NaN: the zero point (ONNX leaves it undefined); finite values agree
// with ONNX Runtime.
TEST(NonFiniteTest, QuantizeLinearOfNaNGivesTheZeroPoint) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {4});
  ir::Value* scale = b.Initializer("scale", Tensor::Scalar<float>(0.5f));
  Tensor zp_value = *Tensor::Allocate(DataType::kUint8, {});
  zp_value.data<uint8_t>()[0] = 7;
  ir::Value* zp = b.Initializer("zp", zp_value);
  b.Output(b.Op("QuantizeLinear", {x, scale, zp}, {}, {.name = "q", .output_names = {"y"}}));
  auto graph = b.Build();
  Tensor in = *Tensor::Allocate(DataType::kFloat32, {4});
  float values[4] = {kNaN, 1.0f, -1.0f, kNaN};
  for (int i = 0; i < 4; ++i) in.data<float>()[i] = values[i];
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok());
  auto got = (*session)->Run({{"x", in}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const uint8_t* q = (*got)[0].second.data<uint8_t>();
  EXPECT_EQ(q[0], 7);
  EXPECT_EQ(q[1], 9);
  EXPECT_EQ(q[2], 5);
  EXPECT_EQ(q[3], 7);
  if (!testing::OrtAvailable())
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  std::string path = ::testing::TempDir() + "/non_finite_quantize.onnx";
  ASSERT_TRUE(ir::SaveModel(*graph, path).ok());
  auto want = testing::RunOrt(path, {{"x", in}}, {"y"});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (int i = 0; i < 4; ++i) {
    const uint8_t ort = (*want)[0].second.data<uint8_t>()[i];
    std::printf("QuantizeLinear(%g): qtune %d, ONNX Runtime %d\n", values[i], q[i], ort);
    if (!std::isnan(values[i])) EXPECT_EQ(q[i], ort) << "x = " << values[i];
  }
}

}  // namespace
}  // namespace qtune::runtime
