// NVFP4 and MXFP8 weights as ONNX exports them, run by qtune (both tiers) against the exact
// dequantized-weight math, and by ONNX Runtime 1.30 where it can:
//   NVFP4 (opset 23): W = DQ(values float4e2m1, DQ(block scales e4m3, global fp32), block 16)
//                     (ModelOpt's layout: two DequantizeLinears);
//   MXFP8 (opset 24): W = DQ(values e4m3, scales float8e8m0, block 32, output_dtype float);
//   MXFP8 (opset 21): the same with the power-of-two scales stored as float32, for engines
//                     without float8e8m0;
//   NVFP4 (opset 21): the E2M1 values held as e4m3 (every E2M1 value is one) with the
//                     decoded block scales (E4M3 times the global scale) as float32.
// Each feeds y = MatMul(x, W). What ONNX Runtime refuses is pinned here too (a change in a
// new ONNX Runtime shows up as a failure, and docs/formats/block-float.md gets updated).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/block_float.h"
#include "core/float_convert.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

namespace fs = std::filesystem;
using ir::Attribute;
using testing::NamedTensors;

constexpr int64_t kK = 64, kN = 24, kM = 3;

Tensor Weights() {
  std::vector<float> w(kK * kN);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = std::sin(0.37f * static_cast<float>(i)) * (0.05f + 0.02f * static_cast<float>(i % 9));
  }
  return Tensor::FromVector<float>({kK, kN}, w);
}

Tensor Activations() {
  std::vector<float> x(kM * kK);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * static_cast<float>(i)) * 2.0f;
  return Tensor::FromVector<float>({kM, kK}, x);
}

// y = x · w in double, rounded to float.
Tensor MatMulExact(const Tensor& x, const Tensor& w) {
  std::vector<float> y(kM * kN);
  for (int64_t m = 0; m < kM; ++m) {
    for (int64_t n = 0; n < kN; ++n) {
      double sum = 0;
      for (int64_t k = 0; k < kK; ++k) {
        sum += static_cast<double>(x.data<float>()[m * kK + k]) * w.data<float>()[k * kN + n];
      }
      y[m * kN + n] = static_cast<float>(sum);
    }
  }
  return Tensor::FromVector<float>({kM, kN}, y);
}

enum class Layout { kNvfp4, kNvfp4Float, kMxfp8E8M0, kMxfp8Float };

std::unique_ptr<ir::Graph> BuildModel(Layout layout, const BlockQuantized& q) {
  const int64_t opset = layout == Layout::kNvfp4 ? 23 : layout == Layout::kMxfp8E8M0 ? 24 : 21;
  const bool nvfp4 = q.values.dtype() == DataType::kFloat4E2M1;
  ir::GraphBuilder b(opset);
  ir::Value* x = b.Input("x", DataType::kFloat32, {kM, kK});
  const std::vector<Attribute> blocked = {Attribute::Int("axis", 0),
                                          Attribute::Int("block_size", q.block_size)};
  ir::Value* w = nullptr;
  if (layout == Layout::kNvfp4) {
    ir::Value* scales = b.Op("DequantizeLinear",
                             {b.Initializer("w_scale_e4m3", q.scales),
                              b.Initializer("w_global", Tensor::Scalar<float>(q.global_scale))});
    w = b.Op("DequantizeLinear", {b.Initializer("w_e2m1", q.values), scales}, blocked);
  } else if (layout == Layout::kMxfp8E8M0) {
    std::vector<Attribute> attrs = blocked;
    attrs.push_back(Attribute::Int("output_dtype", 1));
    w = b.Op("DequantizeLinear",
             {b.Initializer("w_e4m3", q.values), b.Initializer("w_scale_e8m0", q.scales)}, attrs);
  } else {  // float32 scales, e4m3 values
    Tensor scales = *Tensor::Allocate(DataType::kFloat32, q.scales.sizes());
    Tensor values = *Tensor::Allocate(DataType::kFloat8E4M3FN, q.values.sizes());
    for (int64_t i = 0; i < scales.num_elements(); ++i) {
      const uint8_t code = q.scales.data<uint8_t>()[i];
      scales.data<float>()[i] =
          nvfp4 ? Float8E4M3FNToFloat(code) * q.global_scale : Float8E8M0ToFloat(code);
    }
    for (int64_t i = 0; i < values.num_elements(); ++i) {
      const uint8_t code = q.values.data<uint8_t>()[i];
      values.data<uint8_t>()[i] = nvfp4 ? FloatToFloat8E4M3FN(Float4E2M1ToFloat(code)) : code;
    }
    w = b.Op("DequantizeLinear",
             {b.Initializer("w_e4m3", values), b.Initializer("w_scale", scales)}, blocked);
  }
  b.Output(b.Op("MatMul", {x, w}));
  return b.Build();
}

StatusOr<Tensor> RunQtune(const ir::Graph& graph, const NamedTensors& inputs, bool use_onednn) {
  SessionOptions options;
  options.use_onednn = use_onednn;
  ASSIGN_OR_RETURN(auto session, Session::Create(graph, options));
  ASSIGN_OR_RETURN(auto outputs, session->Run(inputs));
  return outputs[0].second;
}

StatusOr<Tensor> RunOrtOn(const ir::Graph& graph, const NamedTensors& inputs,
                          const std::string& tag) {
  const fs::path path =
      fs::temp_directory_path() / ("qtune_" + tag + "_" + std::to_string(getpid()) + ".onnx");
  RETURN_IF_ERROR(ir::SaveModel(graph, path.string()));
  auto ort = testing::RunOrt(path.string(), inputs, {graph.outputs()[0]->name()});
  fs::remove(path);
  if (!ort.ok()) return ort.status();
  return (*ort)[0].second;
}

// qtune (both tiers) equals x · dequantized W up to float32 summation order.
void ExpectQtuneMatchesTheMath(const ir::Graph& graph, const BlockQuantized& q) {
  const NamedTensors inputs = {{"x", Activations()}};
  const Tensor expected = MatMulExact(Activations(), DequantizeBlocks(q));
  for (bool use_onednn : {true, false}) {
    SCOPED_TRACE(use_onednn ? "onednn tier" : "reference tier");
    auto y = RunQtune(graph, inputs, use_onednn);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_LE(testing::MaxAbsDiff(*y, expected), 1e-5);
  }
}

class BlockFloatOrtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::OrtAvailable()) {
      QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
    }
  }
};

// ONNX Runtime 1.30 has no CPU DequantizeLinear for float4e2m1 (opset 23) nor for
// float8e8m0 scales (opset 24): it refuses the model when it creates the session.
void ExpectOrtRefuses(const ir::Graph& graph, const std::string& tag, const std::string& op) {
  auto ort = RunOrtOn(graph, {{"x", Activations()}}, tag);
  std::printf("[ ort 1.30 ] %s: %s\n", tag.c_str(),
              ort.ok() ? "runs" : ort.status().ToString().c_str());
  ASSERT_FALSE(ort.ok()) << tag << " runs in ONNX Runtime now: update docs/formats/block-float.md";
  EXPECT_NE(ort.status().ToString().find("Could not find an implementation for " + op),
            std::string::npos)
      << ort.status().ToString();
}

TEST_F(BlockFloatOrtTest, Nvfp4TwoDequantizeLinearsRunInQtuneNotInOnnxRuntime) {
  auto q = QuantizeNvfp4(Weights(), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  // E2M1 keeps one mantissa bit: the weights stay within ~15% (relative L2) of fp32.
  EXPECT_LE(testing::RelativeL2(DequantizeBlocks(*q), Weights()), 0.15);
  auto graph = BuildModel(Layout::kNvfp4, *q);
  ExpectQtuneMatchesTheMath(*graph, *q);
  ExpectOrtRefuses(*graph, "nvfp4_opset23", "DequantizeLinear(23)");
}

TEST_F(BlockFloatOrtTest, Nvfp4WithFloatScalesRunsInQtuneAndOnnxRuntimeAlike) {
  auto q = QuantizeNvfp4(Weights(), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  auto graph = BuildModel(Layout::kNvfp4Float, *q);
  ExpectQtuneMatchesTheMath(*graph, *q);
  auto ours = RunQtune(*graph, {{"x", Activations()}}, true);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  // Bit for bit what the opset-23 form computes.
  auto standard = RunQtune(*BuildModel(Layout::kNvfp4, *q), {{"x", Activations()}}, true);
  ASSERT_TRUE(standard.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*ours, *standard), 0.0);
  auto ort = RunOrtOn(*graph, {{"x", Activations()}}, "nvfp4_f32");
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  EXPECT_LE(testing::MaxAbsDiff(*ours, *ort), 1e-5);
}

TEST_F(BlockFloatOrtTest, Mxfp8WithE8M0ScalesRunsInQtuneNotInOnnxRuntime) {
  auto q = QuantizeMxfp8(Weights(), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  // E4M3 keeps three mantissa bits: within ~3% (relative L2) of fp32.
  EXPECT_LE(testing::RelativeL2(DequantizeBlocks(*q), Weights()), 0.03);
  auto graph = BuildModel(Layout::kMxfp8E8M0, *q);
  ExpectQtuneMatchesTheMath(*graph, *q);
  ExpectOrtRefuses(*graph, "mxfp8_e8m0", "DequantizeLinear(24)");
}

TEST_F(BlockFloatOrtTest, Mxfp8WithFloatScalesRunsInQtuneAndOnnxRuntime) {
  auto q = QuantizeMxfp8(Weights(), 0);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  auto graph = BuildModel(Layout::kMxfp8Float, *q);
  ExpectQtuneMatchesTheMath(*graph, *q);
  auto ours = RunQtune(*graph, {{"x", Activations()}}, true);
  ASSERT_TRUE(ours.ok());
  auto ort = RunOrtOn(*graph, {{"x", Activations()}}, "mxfp8_f32");
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  EXPECT_LE(testing::MaxAbsDiff(*ours, *ort), 1e-5);
}

int CountDequantize(const ir::Graph& graph) {
  int n = 0;
  for (const ir::Node* node : graph.nodes()) n += node->op_type() == "DequantizeLinear" ? 1 : 0;
  return n;
}

// No kernel fuses block-float DequantizeLinears, and the reference one at every run costs
// ~60x the float MatMul (2048x2048 stack: 413 ms against 7 ms), so the session folds them
// into float32 weights when it prepares the model (passes/fold_constants.cc). A per-channel
// float8 DequantizeLinear (the fp8 QDQ recipes) is not folded.
TEST(BlockFloatFoldTest, BlockFloatDequantizeLinearsFoldAtCompileTime) {
  auto nvfp4 = QuantizeNvfp4(Weights(), 0);
  auto mxfp8 = QuantizeMxfp8(Weights(), 0);
  ASSERT_TRUE(nvfp4.ok() && mxfp8.ok());
  for (auto [layout, q] : {std::pair{Layout::kNvfp4, &*nvfp4},
                           {Layout::kNvfp4Float, &*nvfp4},
                           {Layout::kMxfp8E8M0, &*mxfp8},
                           {Layout::kMxfp8Float, &*mxfp8}}) {
    auto graph = BuildModel(layout, *q);
    ASSERT_GE(CountDequantize(*graph), 1);
    auto session = Session::Create(*graph, SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    EXPECT_EQ(CountDequantize((*session)->graph()), 0) << static_cast<int>(layout);
  }
  // fp8 weights with one float scale per output channel stay a DequantizeLinear.
  ir::GraphBuilder b(19);
  ir::Value* x = b.Input("x", DataType::kFloat32, {kM, kK});
  Tensor codes = *Tensor::Allocate(DataType::kFloat8E4M3FN, {kK, kN});
  for (int64_t i = 0; i < codes.num_elements(); ++i) codes.data<uint8_t>()[i] = 0x38;
  ir::Value* w = b.Op(
      "DequantizeLinear",
      {b.Initializer("w_fp8", codes),
       b.Initializer("w_scale", Tensor::FromVector<float>({kN}, std::vector<float>(kN, 0.5f)))},
      {Attribute::Int("axis", 1)});
  b.Output(b.Op("MatMul", {x, w}));
  auto per_channel = b.Build();
  auto session = Session::Create(*per_channel, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(CountDequantize((*session)->graph()), 1);
}

}  // namespace
}  // namespace qtune::runtime
