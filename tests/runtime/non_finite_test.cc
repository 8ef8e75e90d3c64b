// NaN and infinity through the engine (session.h, "NaN and infinity"): they propagate as
// in ONNX Runtime and numpy, through ReLU, pooling and clamps that oneDNN's max-based
// kernels would turn into numbers, per batch element; the check costs the fast path
// nothing but a pass over the inputs. QuantizeLinear of NaN gives the zero point
// (core/quant_math.h), which dequantizes to 0; ONNX Runtime 1.x gives 0 (the integer a
// NaN-to-int conversion happens to give on x86), which dequantizes to -zero_point * scale.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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
