// Per-step thread counts (step_threads.h): in a plan of 2 threads, steps that move few
// elements and compute few multiply-adds are made for and run on one thread, large ones
// and control flow keep the plan's; a 1-thread plan marks nothing; a run puts OpenMP's
// thread count back and computes what the reference tier does.
#include "runtime/step_threads.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/compile.h"
#include "runtime/kernel_test_util.h"
#include "runtime/session.h"

namespace qtune::runtime {
namespace {

using ir::Attribute;

// x [1, C, S, S] -> Add(x, x) -> Conv 3x3 (C -> C) -> Relu; the sizes set the work.
std::unique_ptr<ir::Graph> AddConvRelu(int64_t channels, int64_t side, std::mt19937& rng) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, channels, side, side});
  ir::Value* sum = b.Op("Add", {x, x});
  ir::Value* w = b.Initializer(
      "w", kernel_testing::RandomTensor({channels, channels, 3, 3}, rng, -0.1f, 0.1f));
  ir::Value* conv = b.Op("Conv", {sum, w}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  b.Output(b.Op("Relu", {conv}));
  return b.Build();
}

// Step threads by op type (the first step of each type).
std::map<std::string, int> ThreadsByOp(const Plan& plan) {
  std::map<std::string, int> threads;
  for (const PlanStep& step : plan.steps) threads.emplace(step.op_type, step.threads);
  return threads;
}

TEST(StepThreads, SmallStepsOfAMultiThreadPlanRunOnOneThread) {
  std::mt19937 rng(5101);
  CompileOptions two;
  two.threads = 2;
  // 8 channels of 6x6: 288 elements, 20736 multiply-adds: every step is small.
  auto small = AddConvRelu(8, 6, rng);
  auto plan = Compile(*small, {{"x", {1, 8, 6, 6}}}, two);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (const PlanStep& step : (*plan)->steps) {
    EXPECT_EQ(step.threads, 1) << step.op_type << " " << step.node_name;
  }
  EXPECT_NE((*plan)->ToString({.explain_kernels = true}).find("threads 1 (a small step)"),
            std::string::npos);
  // 64 channels of 48x48: 147456 elements per tensor (the Add moves 442368), 85 million
  // multiply-adds: nothing is small, and nothing is marked.
  auto large = AddConvRelu(64, 48, rng);
  plan = Compile(*large, {{"x", {1, 64, 48, 48}}}, two);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (const PlanStep& step : (*plan)->steps) {
    EXPECT_EQ(step.threads, 0) << step.op_type << " " << step.node_name;
  }
  // A 1-thread plan has nothing to mark.
  CompileOptions one;
  plan = Compile(*small, {{"x", {1, 8, 6, 6}}}, one);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (const auto& [op, threads] : ThreadsByOp(**plan)) EXPECT_EQ(threads, 0) << op;
}

TEST(StepThreads, WorkCountsElementsAndMultiplyAdds) {
  ir::GraphBuilder b(13);
  ir::Value* a = b.Input("a", DataType::kFloat32, {4, 256});
  std::mt19937 rng(5102);
  ir::Value* w = b.Initializer("w", kernel_testing::RandomTensor({256, 512}, rng));
  b.Output(b.Op("MatMul", {a, w}));
  auto graph = b.Build();
  ValueInfo a_info = MakeInfo(DataType::kFloat32, {4, 256});
  ValueInfo w_info = MakeInfo(DataType::kFloat32, {256, 512});
  w_info.constant = graph->FindValue("w")->initializer();
  ValueInfo y_info = MakeInfo(DataType::kFloat32, {4, 512});
  const ir::Node& node = *graph->nodes()[0];
  KernelRequest request{node, 13, 2, {&a_info, &w_info}, {&y_info}, {}};
  const StepWork work = WorkOf(request);
  EXPECT_EQ(work.elements, 4 * 256 + 4 * 512);  // the constant weights are not counted
  EXPECT_EQ(work.macs, 4 * 512 * 256);
  EXPECT_EQ(StepThreads(request, 2), 2);  // 524288 multiply-adds
  EXPECT_EQ(StepThreads(request, 1), 1);
}

// A 2-thread session whose steps switch between one thread and two: the same outputs as
// the reference tier, and OpenMP's thread count back at 2 after each run.
TEST(StepThreads, RunsMatchTheReferenceAndRestoreTheThreadCount) {
  std::mt19937 rng(5103);
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 32, 40, 40});
  ir::Value* w = b.Initializer("w", kernel_testing::RandomTensor({32, 32, 3, 3}, rng, -0.1f, 0.1f));
  ir::Value* conv = b.Op("Conv", {x, w}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  ir::Value* pooled = b.Op("GlobalAveragePool", {conv});  // 32 elements out: small
  b.Output(b.Op("Relu", {pooled}));
  auto graph = b.Build();
  SessionOptions fast;
  fast.threads = 2;
  SessionOptions reference = fast;
  reference.use_onednn = false;
  auto session = Session::Create(*graph, fast);
  auto oracle = Session::Create(*graph, reference);
  ASSERT_TRUE(session.ok() && oracle.ok());
  auto plan = (*session)->Prepare({{"x", {1, 32, 40, 40}}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const std::map<std::string, int> threads = ThreadsByOp(**plan);
  EXPECT_EQ(threads.at("Conv"), 0);  // 14.7 million multiply-adds
  EXPECT_EQ(threads.at("GlobalAveragePool"), 1);
  EXPECT_EQ(threads.at("Relu"), 1);
  Tensor input = kernel_testing::RandomTensor({1, 32, 40, 40}, rng);
  for (int run = 0; run < 3; ++run) {
    omp_set_num_threads(2);
    auto ours = (*session)->Run({{"x", input}});
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    EXPECT_EQ(omp_get_max_threads(), 2);
    auto expected = (*oracle)->Run({{"x", input}});
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    const float* got = (*ours)[0].second.data<float>();
    const float* want = (*expected)[0].second.data<float>();
    for (int64_t i = 0; i < 32; ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
  }
}

}  // namespace
}  // namespace qtune::runtime
