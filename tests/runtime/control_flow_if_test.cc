// If on the engine: branches compiled for their outer values' sizes, a run-time condition
// choosing between them, a compile-time one compiling only its branch, and the error for
// branches whose sizes disagree.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "ir/subgraph.h"
#include "runtime/control_flow_test_models.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/session.h"

namespace qtune::runtime {
namespace {

using testing::BuildVadModel;
using testing::RandomFloats;

NamedTensors VadInputs(int64_t n, int64_t sr, uint32_t seed) {
  std::mt19937 rng(seed);
  return {{"x", RandomFloats({1, n}, rng)},
          {"sr", Tensor::Scalar<int64_t>(sr)},
          {"state", RandomFloats({2, 1, 128}, rng, 0.5f)}};
}

NamedTensors RunSession(const ir::Graph& graph, const NamedTensors& inputs, bool use_onednn) {
  SessionOptions options;
  options.use_onednn = use_onednn;
  auto session = Session::Create(graph, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  auto outputs = (*session)->Run(inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  return outputs.ok() ? *outputs : NamedTensors{};
}

float MaxDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  if (a.sizes() != b.sizes()) return 1e9f;
  float most = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    most = std::max(most, std::abs(a.data<float>()[i] - b.data<float>()[i]));
  }
  return most;
}

TEST(ControlFlowIfTest, VadModelRunsBothBranchesOnBothTiers) {
  std::unique_ptr<ir::Graph> graph = BuildVadModel();
  for (int64_t sr : {16000, 8000}) {
    SCOPED_TRACE("sr " + std::to_string(sr));
    NamedTensors inputs = VadInputs(512, sr, 3);
    NamedTensors fast = RunSession(*graph, inputs, /*use_onednn=*/true);
    NamedTensors oracle = RunSession(*graph, inputs, /*use_onednn=*/false);
    ASSERT_EQ(fast.size(), 2u);
    ASSERT_EQ(oracle.size(), 2u);
    EXPECT_EQ(fast[0].second.sizes(), (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(fast[1].second.sizes(), (std::vector<int64_t>{2, 1, 128}));
    EXPECT_LE(MaxDiff(fast[0].second, oracle[0].second), 1e-5f);
    EXPECT_LE(MaxDiff(fast[1].second, oracle[1].second), 1e-5f);
  }
  // The two branches are different front ends: the new states differ.
  NamedTensors a = RunSession(*graph, VadInputs(512, 16000, 3), true);
  NamedTensors b = RunSession(*graph, VadInputs(512, 8000, 3), true);
  EXPECT_GT(MaxDiff(a[1].second, b[1].second), 1e-3f);
}

TEST(ControlFlowIfTest, OneSessionServesBothBranchesAndSeveralSizes) {
  std::unique_ptr<ir::Graph> graph = BuildVadModel();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  for (int64_t n : {512, 256, 512}) {
    for (int64_t sr : {8000, 16000}) {
      NamedTensors inputs = VadInputs(n, sr, 5);
      auto out = (*session)->Run(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      NamedTensors fresh = RunSession(*graph, inputs, true);
      EXPECT_EQ(MaxDiff((*out)[1].second, fresh[1].second), 0.0f) << "n " << n << " sr " << sr;
    }
  }
}

TEST(ControlFlowIfTest, VadModelSurvivesSaveAndLoad) {
  std::unique_ptr<ir::Graph> graph = BuildVadModel();
  auto bytes = ir::SerializeModel(*graph);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto loaded = ir::ParseModel(*bytes, "vad.onnx", ir::LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  NamedTensors inputs = VadInputs(256, 8000, 9);
  NamedTensors before = RunSession(*graph, inputs, true);
  NamedTensors after = RunSession(**loaded, inputs, true);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(MaxDiff(before[0].second, after[0].second), 0.0f);
}

// If(cond) with then -> [2] and else -> [3] constants; `cond` an input or a constant.
std::unique_ptr<ir::Graph> DisagreeingIf(bool constant_cond) {
  auto branch = [](const std::string& name, int64_t n) {
    ir::GraphBuilder g(16);
    ir::OpOptions o;
    o.name = name + "_c";
    ir::Value* v = g.Constant(Tensor::FromVector<float>({n}, std::vector<float>(n, 1.0f)), o);
    g.Output(v);
    auto a = ir::SubgraphAttribute(name, *g.Build(), 0);
    EXPECT_TRUE(a.ok());
    return *a;
  };
  ir::GraphBuilder b(16);
  ir::Value* cond = constant_cond ? b.Constant(Tensor::Scalar<bool>(false))
                                  : b.Input("cond", DataType::kBool, std::vector<int64_t>{});
  if (constant_cond) b.Input("unused", DataType::kFloat32, std::vector<int64_t>{});
  ir::Value* y =
      b.Op("If", {cond}, {branch("then_branch", 2), branch("else_branch", 3)}, {.name = "pick"});
  b.Output(y);
  return b.Build();
}

TEST(ControlFlowIfTest, ConstantConditionCompilesOnlyItsBranch) {
  std::unique_ptr<ir::Graph> graph = DisagreeingIf(/*constant_cond=*/true);
  for (bool use_onednn : {true, false}) {
    NamedTensors out = RunSession(*graph, {{"unused", Tensor::Scalar<float>(0)}}, use_onednn);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].second.sizes(), (std::vector<int64_t>{3}));
  }
}

// Branches whose outputs differ in size under a run-time condition: no plan can be
// compiled before running (Prepare says so), and the model runs in stages, each branch
// giving its own size.
TEST(ControlFlowIfTest, RunTimeConditionWithDisagreeingBranchesRunsInStages) {
  std::unique_ptr<ir::Graph> graph = DisagreeingIf(/*constant_cond=*/false);
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto plan = (*session)->Prepare({{"cond", {}}});
  EXPECT_EQ(plan.status().code(), StatusCode::kFailedPrecondition);
  for (bool use_onednn : {true, false}) {
    for (bool cond : {true, false}) {
      NamedTensors out = RunSession(*graph, {{"cond", Tensor::Scalar<bool>(cond)}}, use_onednn);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].second.sizes(), (std::vector<int64_t>{cond ? 2 : 3}));
    }
  }
}

TEST(ControlFlowIfTest, ReferenceExecutorRunsTheVadModel) {
  std::unique_ptr<ir::Graph> graph = BuildVadModel();
  for (int64_t sr : {16000, 8000}) {
    NamedTensors inputs = VadInputs(256, sr, 4);
    auto reference = RunReference(*graph, inputs);
    ASSERT_TRUE(reference.ok()) << reference.status().ToString();
    NamedTensors engine = RunSession(*graph, inputs, true);
    EXPECT_LE(MaxDiff((*reference)[0].second, engine[0].second), 1e-5f);
    EXPECT_LE(MaxDiff((*reference)[1].second, engine[1].second), 1e-5f);
  }
}

}  // namespace
}  // namespace qtune::runtime
