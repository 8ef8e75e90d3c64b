// The ResNet-18 that tests build in C++ (util/test_models.h, He-initialized random weights)
// through the engine: its outputs stay finite and of moderate size (so int8 and speed
// tests on it measure something), the oneDNN tier matches the reference executor, and the
// plan is fused (BatchNormalization folded, Relu and residual Adds inside FusedConv).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runtime/fused_run.h"
#include "util/test_models.h"

namespace qtune::runtime {
namespace {

Tensor RandomImage(int64_t batch, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, {batch, 3, 224, 224});
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

double RelativeL2(const Tensor& a, const Tensor& b) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double d = double{a.data<float>()[i]} - b.data<float>()[i];
    diff += d * d;
    norm += double{b.data<float>()[i]} * b.data<float>()[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

TEST(ResNet18EngineTest, LogitsAreFiniteModerateAndMatchTheReference) {
  std::unique_ptr<ir::Graph> graph = testing::BuildTestResNet18();
  NamedTensors inputs = {{"input", RandomImage(2, 11)}};
  auto run = RunFusedAndReference(*graph, inputs);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const Tensor& logits = run->got[0].second;
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{2, 1000}));
  double sum_sq = 0;
  for (float v : logits.span<float>()) {
    ASSERT_TRUE(std::isfinite(v));
    sum_sq += double{v} * v;
  }
  double rms = std::sqrt(sum_sq / logits.num_elements());
  const double error = RelativeL2(logits, run->want[0].second);
  std::printf("resnet18 (built, seed %llu): logits rms %.3g, relative L2 to the reference %.2e\n",
              static_cast<unsigned long long>(testing::kResNet18Seed), rms, error);
  EXPECT_GT(rms, 0.05);
  EXPECT_LT(rms, 100.0);
  EXPECT_LE(error, 1e-4);
}

TEST(ResNet18EngineTest, PlanFoldsBatchNormAndFusesEveryConv) {
  std::unique_ptr<ir::Graph> graph = testing::BuildTestResNet18();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto plan = (*session)->Prepare({{"input", {1, 3, 224, 224}}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::map<std::string, int> ops;
  for (const PlanStep& step : (*plan)->steps) ++ops[step.op_type];
  EXPECT_EQ(ops["BatchNormalization"], 0) << (*plan)->ToString();
  // The 17 Convs followed by Relu or a residual Add fuse; the 3 downsample 1x1 Convs feed
  // an Add as its second input (fused into the block's last FusedConv) and stay plain.
  EXPECT_EQ(ops["FusedConv"], 17) << (*plan)->ToString();
  EXPECT_EQ(ops["Conv"], 3) << (*plan)->ToString();
  EXPECT_EQ(ops["Relu"] + ops["Add"], 0) << "Relu and the residual Adds fuse into FusedConv\n"
                                         << (*plan)->ToString();
  // Winograd (run.md, "3x3 convolutions"): layer1's four 64-channel convolutions at
  // F(4x4, 3x3), layer2's three stride-1 128-channel ones at F(2x2, 3x3).
  std::map<std::string, int> winograd;
  for (const PlanStep& step : (*plan)->steps) {
    const std::string impl = step.kernel->Describe();
    if (impl.rfind("onednn:winograd_", 0) == 0) ++winograd[impl.substr(0, impl.find(':', 7))];
  }
  EXPECT_EQ(winograd["onednn:winograd_4x3"], 4) << (*plan)->ToString();
  EXPECT_EQ(winograd["onednn:winograd_2x3"], 3) << (*plan)->ToString();
}

// The `bf16` deployment candidate: every Conv and the Gemm compute in bfloat16 on oneDNN
// (inputs and weights rounded to bf16, fp32 accumulation): close to fp32, never a
// reference kernel.
TEST(ResNet18EngineTest, Bf16ComputeStaysOnOnednnAndCloseToFp32) {
  std::unique_ptr<ir::Graph> graph = testing::BuildTestResNet18();
  NamedTensors inputs = {{"input", RandomImage(1, 12)}};
  SessionOptions bf16_options;
  bf16_options.bf16 = true;
  auto fp32 = Session::Create(*graph, SessionOptions{});
  auto bf16 = Session::Create(*graph, bf16_options);
  ASSERT_TRUE(fp32.ok() && bf16.ok());
  auto plan = (*bf16)->Prepare({{"input", {1, 3, 224, 224}}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  int bf16_steps = 0;
  for (const PlanStep& step : (*plan)->steps) {
    std::string impl = step.kernel->Describe();
    if (step.op_type == "FusedConv" || step.op_type == "Conv" || step.op_type == "Gemm") {
      EXPECT_EQ(impl.find("reference"), std::string::npos) << step.node_name << ": " << impl;
      if (impl.find("bf16") != std::string::npos) ++bf16_steps;
    }
  }
  // Every Conv and the Gemm on a CPU with bf16 instructions; the primitive names its ISA.
  std::printf("bf16 plan: %d of 21 Conv/Gemm steps name a bf16 implementation\n", bf16_steps);
  auto want = (*fp32)->Run(inputs);
  auto got = (*bf16)->Run(inputs);
  ASSERT_TRUE(want.ok() && got.ok());
  double error = RelativeL2((*got)[0].second, (*want)[0].second);
  std::printf("bf16 vs fp32 logits: relative L2 %.2e\n", error);
  EXPECT_GT(error, 0.0) << "bf16 rounding must change something: is it really bf16?";
  EXPECT_LE(error, 0.05);
}

}  // namespace
}  // namespace qtune::runtime
