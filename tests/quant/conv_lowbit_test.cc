// Block formats on Conv weights (issue 27): int4 blockwise rounding along the input
// channels pinned against hand-computed scales and codes and against the reference
// DequantizeLinear, folded to fp32 weights at compile time; AWQ and clip on a Conv against
// RTN; corrupt block scales; the guards (input channels not a multiple of the block,
// shorter than one, depthwise convs, clip/awq on grouped convs, a forced block size);
// grouped convs blocked inside each group. The Fashion-MNIST ResNet: conv_lowbit_fmnist_test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "conv_lowbit_util.h"
#include "core/npy.h"
#include "export_test_util.h"
#include "passes/pipeline.h"
#include "placement_test_util.h"
#include "quant/lowbit_checks.h"
#include "quant/recipe.h"
#include "runtime/reference/registry.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::quant {
namespace {

namespace fs = std::filesystem;
using conv_lowbit::DequantizeFeedingConv;
using conv_lowbit::Int4ConvRecipe;
using conv_lowbit::Quantize;
using conv_lowbit::TempPath;

std::vector<float> ConvWeights(int64_t out, int64_t in) {
  std::vector<float> w(static_cast<size_t>(out * in * 9));
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = 0.3f * std::sin(0.37f * static_cast<float>(i)) + 0.01f * static_cast<float>(i % 5);
  }
  return w;
}

// x [1, 32, 6, 6] -> Conv "c" (3x3, pads 1, weight "c_w" [4, 32, 3, 3]) -> y.
std::unique_ptr<ir::Graph> OneConv(const std::vector<float>& weights) {
  ir::GraphBuilder b(21);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 32, 6, 6});
  ir::Value* w = b.Initializer("c_w", Tensor::FromVector<float>({4, 32, 3, 3}, weights));
  b.Output(
      b.Op("Conv", {x, w},
           {ir::Attribute::Ints("kernel_shape", {3, 3}), ir::Attribute::Ints("pads", {1, 1, 1, 1})},
           {.name = "c"}));
  return b.Build();
}

Tensor ConvInput() {
  std::vector<float> x(32 * 36);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * static_cast<float>(i)) * 2.0f;
  return Tensor::FromVector<float>({1, 32, 6, 6}, x);
}

const ir::Node* FindOp(const ir::Graph& g, const std::string& op) {
  for (const ir::Node* n : g.nodes()) {
    if (n->op_type() == op) return n;
  }
  return nullptr;
}

// Codes INT4 [4, 32, 3, 3] and scales [4, 2, 3, 3]: scale = amax over the 16 input
// channels of block g at (o, s) / 7, code = rne(w / scale); DequantizeLinear(axis 1,
// block 16) of them is what the Conv reads.
TEST(ConvLowBitTest, Int4RoundingAlongInputChannelsMatchesHandComputedBlocks) {
  const std::vector<float> w = ConvWeights(4, 32);
  auto model = OneConv(w);
  const std::string recipe = Int4ConvRecipe(16, "rtn");
  auto result = Quantize(*model, recipe);
  fs::remove(recipe);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ir::Graph& q = *result->quantized;
  EXPECT_EQ(q.onnx_opset(), 21);
  const ir::Node* dq = FindOp(q, "DequantizeLinear");
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->GetInt("axis", 0), 1);
  EXPECT_EQ(dq->GetInt("block_size", 0), 16);
  const Tensor& codes = dq->input(0)->initializer();
  const Tensor& scales = dq->input(1)->initializer();
  ASSERT_EQ(codes.dtype(), DataType::kInt4);
  EXPECT_EQ(codes.sizes(), (std::vector<int64_t>{4, 32, 3, 3}));
  ASSERT_EQ(scales.dtype(), DataType::kFloat32);
  EXPECT_EQ(scales.sizes(), (std::vector<int64_t>{4, 2, 3, 3}));
  const auto* c = static_cast<const int8_t*>(codes.raw_data());
  std::vector<float> dequantized(w.size());
  for (int64_t o = 0; o < 4; ++o) {
    for (int64_t g = 0; g < 2; ++g) {
      for (int64_t s = 0; s < 9; ++s) {
        float amax = 0.0f;
        for (int64_t i = g * 16; i < g * 16 + 16; ++i) {
          amax = std::max(amax, std::fabs(w[(o * 32 + i) * 9 + s]));
        }
        const float scale = amax / 7.0f;
        ASSERT_FLOAT_EQ(scales.data<float>()[(o * 2 + g) * 9 + s], scale) << o << " " << g;
        for (int64_t i = g * 16; i < g * 16 + 16; ++i) {
          const int64_t at = (o * 32 + i) * 9 + s;
          // nearbyint: ties to even (the default rounding mode).
          const int expected = static_cast<int>(std::nearbyint(w[at] / scale));
          ASSERT_EQ(c[at], std::clamp(expected, -7, 7)) << "element " << at;
          dequantized[at] = static_cast<float>(c[at]) * scale;
        }
      }
    }
  }
  // The quantized model = the float conv on the hand-dequantized weights.
  const Tensor x = ConvInput();
  auto ours = testing::RunQtune(q, "x", x);
  auto reference = testing::RunQtune(*OneConv(dequantized), "x", x);
  ASSERT_TRUE(ours.ok() && reference.ok()) << ours.status().ToString();
  EXPECT_LE(qtune::testing::MaxAbsDiff(*ours, *reference), 1e-5);
  // Compile time folds the DequantizeLinear: the conv runs on fp32 weights.
  std::unique_ptr<ir::Graph> folded = q.Clone();
  passes::PassOptions options;
  options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs, int64_t opset) {
    return runtime::EvaluateNode(node, inputs, opset);
  };
  ASSERT_TRUE(passes::RunPipeline(*folded, options).ok());
  EXPECT_EQ(testing::CountOps(*folded, "DequantizeLinear"), 0);
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  auto ort = testing::RunOrtOn(q, "conv_int4", "x", x);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  EXPECT_LE(qtune::testing::MaxAbsDiff(*ort, *ours), 1e-4);
}

// Samples [n, 32, 6, 6] whose input channels 0..3 are 30x the others (salient channels).
Tensor SalientInputs(int64_t n, uint32_t seed) {
  std::vector<float> x(static_cast<size_t>(n * 32 * 36));
  uint32_t state = seed;
  for (size_t i = 0; i < x.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    const float u = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
    x[i] = (i / 36) % 32 < 4 ? 30.0f * u : u;
  }
  return Tensor::FromVector<float>({n, 32, 6, 6}, x);
}

// AWQ's per-input-channel scales (searched on im2col patches) and the clip search lower a
// Conv's output error against RTN when some input channels are salient; ORT runs the AWQ
// export (its Mul(x, 1/s) on the conv input) like qtune.
TEST(ConvLowBitTest, AwqAndClipBeatRtnOnAConvWithSalientInputChannels) {
  auto model = OneConv(ConvWeights(4, 32));
  const std::string calib = TempPath("salient.npy");
  ASSERT_TRUE(WriteNpy(calib, SalientInputs(16, 1)).ok());
  std::map<std::string, double> error;
  for (int sample = 0; sample < 4; ++sample) {
    const Tensor x = testing::Rows(SalientInputs(4, 7), sample, 1);
    auto fp32 = testing::RunQtune(*model, "x", x);
    ASSERT_TRUE(fp32.ok());
    for (const std::string algorithm : {"rtn", "clip", "awq"}) {
      const std::string recipe = Int4ConvRecipe(16, algorithm);
      QuantizeModelOptions options;
      options.recipe = recipe;
      options.show_progress = false;
      options.calib_specs = {calib};
      auto result = QuantizeModel(*model, options);
      fs::remove(recipe);
      ASSERT_TRUE(result.ok()) << algorithm << ": " << result.status().ToString();
      auto out = testing::RunQtune(*result->quantized, "x", x);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      error[algorithm] += qtune::testing::RelativeL2(*out, *fp32);
      if (algorithm == "awq" && sample == 0) {
        ASSERT_EQ(result->plan.sites.size(), 1u);
        EXPECT_EQ(result->plan.sites[0].input_scale.size(), 32u);
        EXPECT_EQ(testing::CountOps(*result->quantized, "Mul"), 1);  // x * (1 / s)
        if (qtune::testing::OrtAvailable()) {
          auto ort = testing::RunOrtOn(*result->quantized, "conv_awq", "x", x);
          ASSERT_TRUE(ort.ok()) << ort.status().ToString();
          EXPECT_LE(qtune::testing::RelativeL2(*ort, *out), 1e-5);
        }
      }
    }
  }
  fs::remove(calib);
  std::printf("[ conv awq ] relative L2 vs fp32 over 4 inputs: rtn %.4f, clip %.4f, awq %.4f\n",
              error["rtn"] / 4, error["clip"] / 4, error["awq"] / 4);
  EXPECT_LT(error["awq"], error["rtn"]);
  EXPECT_LE(error["clip"], error["rtn"]);
}

// A corrupt Conv block scale (one block too few along the input channels, or a NaN) is
// refused when the model is loaded, naming the scale initializer, not folded or run.
TEST(ConvLowBitTest, CorruptConvBlockScalesAreRefusedNamingTheScale) {
  const std::string recipe = Int4ConvRecipe(16, "rtn");
  auto result = Quantize(*OneConv(ConvWeights(4, 32)), recipe);
  fs::remove(recipe);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  for (bool nan : {false, true}) {
    SCOPED_TRACE(nan ? "NaN scale" : "scale count");
    std::unique_ptr<ir::Graph> q = result->quantized->Clone();
    ir::Node* dq = nullptr;
    for (ir::Node* n : q->nodes()) {
      if (n->op_type() == "DequantizeLinear") dq = n;
    }
    ASSERT_NE(dq, nullptr);
    ir::Value* scale = dq->input(1);
    Tensor bad = *Tensor::Allocate(DataType::kFloat32, nan ? std::vector<int64_t>{4, 2, 3, 3}
                                                           : std::vector<int64_t>{4, 1, 3, 3});
    for (float& v : bad.span<float>()) v = 0.1f;
    if (nan) bad.data<float>()[5] = std::nanf("");
    ASSERT_TRUE(q->SetInitializer(scale, std::move(bad)).ok());
    auto session = runtime::Session::Create(*q, runtime::SessionOptions{});
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(session.status().message().find(scale->name()), std::string::npos)
        << session.status().ToString();
  }
}

// Conv "a" 16 -> 48 (16 < one block of 32), "b" 48 -> 32 (48 not a multiple of 32), "d"
// depthwise 32 (group 32: one input channel per group), "e" 32 -> 64 (fits), "g" 64 -> 64
// in 2 groups (32 input channels per group: fits), "f" 64 -> 8 (fits: weight-only, so the
// int8 rule "output channels = 8 < 16" does not apply).
std::unique_ptr<ir::Graph> GuardModel() {
  ir::GraphBuilder b(21);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 16, 8, 8});
  ir::Value* a = testing::Conv(b, x, "a", 16, 48);
  ir::Value* c = testing::Conv(b, a, "b", 48, 32);
  ir::Value* d = testing::Conv(b, c, "d", 32, 32, 3, 32);
  ir::Value* e = testing::Conv(b, d, "e", 32, 64);
  b.Output(testing::Conv(b, testing::Conv(b, e, "g", 64, 64, 3, 2), "f", 64, 8));
  return b.Build();
}

TEST(ConvLowBitTest, GuardsLeaveConvsFloatWithTheReasonOrFailWhenForced) {
  auto model = GuardModel();
  const std::string path = Int4ConvRecipe(32, "rtn");
  auto recipe = LoadRecipe(path);
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  const InputSizes sizes = {{"x", {1, 16, 8, 8}}};
  QuantPlan plan = testing::PlanOrDie(*model, *recipe, Target::kCpu, sizes);
  const std::map<std::string, std::string> expected = {
      {"a", "input channels = 16 < int4 block_size 32 (one block)"},
      {"b", "input channels = 48 is not a multiple of int4 block_size 32"},
      {"d", "input channels per group = 1 < int4 block_size 32 (one block)"}};
  for (const auto& [node, reason] : expected) {
    const SkippedLayer* s = testing::Skipped(plan, node);
    ASSERT_NE(s, nullptr) << node;
    EXPECT_EQ(s->reason, reason) << node;
  }
  const QuantSite* e = testing::SiteFor(plan, "e", 1);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->weight_only);
  EXPECT_EQ(e->config.axis, 1);
  EXPECT_EQ(e->config.block_size, 32);
  for (const char* name : {"f", "g"}) {
    const QuantSite* site = testing::SiteFor(plan, name, 1);
    ASSERT_NE(site, nullptr) << name << ": "
                             << (testing::Skipped(plan, name) ? testing::Skipped(plan, name)->reason
                                                              : "");
    EXPECT_TRUE(site->weight_only);
  }
  // clip / awq on a grouped conv (its input-channel statistics span the groups): float.
  const std::string awq_path = Int4ConvRecipe(32, "awq");
  auto awq = LoadRecipe(awq_path);
  fs::remove(awq_path);
  ASSERT_TRUE(awq.ok()) << awq.status().ToString();
  QuantPlan awq_plan = testing::PlanOrDie(*model, *awq, Target::kCpu, sizes);
  const SkippedLayer* g = testing::Skipped(awq_plan, "g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->reason,
            "awq on a grouped conv (group = 2): clip and awq take group = 1 convs only (rtn does)");
  // A rule naming b's quantizer exactly forces its block size: a usage error.
  const std::string forced = TempPath("forced.yaml");
  std::ofstream(forced) << "imports: {base: \"" << path << "\"}\nquantizers:\n  - $import: base\n"
                        << "  - name: \"b/weight_quantizer\"\n    block_size: 32\n";
  auto forced_recipe = LoadRecipe(forced);
  fs::remove(forced);
  fs::remove(path);
  ASSERT_TRUE(forced_recipe.ok()) << forced_recipe.status().ToString();
  // Found before calibration (CheckLowBitRecipe: quantize exits 2) and by placement.
  const Status usage = CheckLowBitRecipe(*model, *forced_recipe, Target::kCpu);
  EXPECT_EQ(usage.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(usage.message().find("input channels = 48 is not a multiple of int4 block_size 32"),
            std::string::npos)
      << usage.ToString();
  auto failed = PlanQuantization(*model, *forced_recipe, Target::kCpu, sizes);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(failed.status().message().find(
                "input channels = 48 is not a multiple of int4 block_size 32 of weight 'b_w'"),
            std::string::npos)
      << failed.status().ToString();
}

// clip / awq on a Conv weight without blocks (per output channel): a usage error.
TEST(ConvLowBitTest, ClipOnAConvWithoutBlocksIsAUsageError) {
  const std::string path = TempPath("clip8.yaml");
  std::ofstream(path) << "quantizers:\n  - name: \"*\"\n    enable: false\n"
                      << "  - name: \"*weight_quantizer\"\n    op: Conv\n    format: int8\n"
                      << "    algorithm: clip\n";
  auto recipe = LoadRecipe(path);
  fs::remove(path);
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  const Status status = CheckLowBitRecipe(*GuardModel(), *recipe, Target::kCpu);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("clip and awq take Conv weights in blocks only"),
            std::string::npos)
      << status.ToString();
}

// A grouped conv's blocks stay inside each group (W's axis 1): qtune and ONNX Runtime agree
// on the int4 QDQ and the nvfp4 --target ort exports of the guard model.
TEST(ConvLowBitTest, GroupedConvExportsRunInOrtAndAgree) {
  auto model = GuardModel();
  std::vector<float> xs(16 * 64);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.05f * static_cast<float>(i));
  const Tensor x = Tensor::FromVector<float>({1, 16, 8, 8}, xs);
  auto fp32 = testing::RunQtune(*model, "x", x);
  ASSERT_TRUE(fp32.ok()) << fp32.status().ToString();
  const std::string int4 = Int4ConvRecipe(32, "rtn");
  for (const auto& [recipe, target] :
       {std::pair<std::string, Target>{int4, Target::kCpu}, {"nvfp4", Target::kOrt}}) {
    SCOPED_TRACE(recipe);
    auto result = Quantize(*model, recipe, target);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const ir::Graph& q = *result->quantized;
    const ir::Node* g = q.FindNode("g");
    ASSERT_NE(g, nullptr);
    ASSERT_NE(g->input(1)->producer(), nullptr);
    EXPECT_EQ(g->input(1)->producer()->op_type(), "DequantizeLinear");
    auto ours = testing::RunQtune(q, "x", x);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    const double error = qtune::testing::RelativeL2(*ours, *fp32);
    std::printf("[ grouped ] %s: relative L2 vs fp32 %.4f\n", recipe.c_str(), error);
    // These weights take 13 values (0.01 * (-6..6)): E2M1 rounds 0.05 to 0.04 or 0.06
    // in every block, and nvfp4 quantizes 5 convs in a row (int4 block 32: 3).
    EXPECT_LT(error, target == Target::kOrt ? 0.5 : 0.2);
    if (!qtune::testing::OrtAvailable()) {
      fs::remove(int4);
      QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
    }
    auto ort = testing::RunOrtOn(q, "grouped_conv", "x", x);
    ASSERT_TRUE(ort.ok()) << ort.status().ToString();
    EXPECT_LE(qtune::testing::RelativeL2(*ort, *ours), 1e-5);
  }
  fs::remove(int4);
}

}  // namespace
}  // namespace qtune::quant
