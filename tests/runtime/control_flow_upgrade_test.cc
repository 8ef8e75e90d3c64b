// upgrade_opset on models with If/Loop bodies: the bodies are rewritten (ReduceMean's axes
// attribute becomes an input at opset 18 inside both VAD branches) and the model computes
// the same before and after.
#include <gtest/gtest.h>

#include "ir/onnx_io.h"
#include "ir/subgraph.h"
#include "passes/upgrade_opset.h"
#include "runtime/control_flow_test_models.h"
#include "runtime/session.h"

namespace qtune::runtime {
namespace {

// The ReduceMean nodes of a node's graph attribute `name`.
std::vector<const ir::Node*> ReduceMeans(const ir::Graph& body) {
  std::vector<const ir::Node*> found;
  for (const ir::Node* n : body.nodes()) {
    if (n->op_type() == "ReduceMean") found.push_back(n);
  }
  return found;
}

std::unique_ptr<ir::Graph> Body(const ir::Graph& graph, const ir::Node& node,
                                const std::string& name) {
  ir::SubgraphContext context;
  context.model = &graph.info();
  context.keep_declared_inputs = true;
  for (const ir::Value* v : node.implicit_inputs()) context.outer[v->name()] = {v->dtype(), {}};
  auto body = ir::ParseSubgraph(node.FindAttribute(name)->graphs[0], context);
  EXPECT_TRUE(body.ok()) << body.status().ToString();
  return body.ok() ? std::move(body).value() : nullptr;
}

TEST(ControlFlowUpgradeTest, IfBranchesAreUpgradedAndComputeTheSame) {
  std::unique_ptr<ir::Graph> graph = testing::BuildVadModel();
  std::unique_ptr<ir::Graph> upgraded = graph->Clone();
  auto changed = passes::UpgradeOpset(*upgraded, passes::UpgradeOpsetOptions{18});
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  const ir::Node* if_node = nullptr;
  for (const ir::Node* n : upgraded->nodes()) {
    if (n->op_type() == "If") if_node = n;
  }
  ASSERT_NE(if_node, nullptr);
  for (const char* branch : {"then_branch", "else_branch"}) {
    SCOPED_TRACE(branch);
    std::unique_ptr<ir::Graph> body = Body(*upgraded, *if_node, branch);
    ASSERT_NE(body, nullptr);
    auto means = ReduceMeans(*body);
    ASSERT_EQ(means.size(), 1u);
    EXPECT_EQ(means[0]->num_inputs(), 2u);  // axes is an input from opset 18 on
    EXPECT_FALSE(means[0]->HasAttribute("axes"));
  }
  // Saved and loaded again, the upgraded model gives the same outputs as the original.
  auto bytes = ir::SerializeModel(*upgraded);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto loaded = ir::ParseModel(*bytes, "upgraded.onnx", ir::LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->onnx_opset(), 18);
  std::mt19937 rng(2);
  NamedTensors inputs = {{"x", testing::RandomFloats({1, 256}, rng)},
                         {"sr", Tensor::Scalar<int64_t>(16000)},
                         {"state", testing::RandomFloats({2, 1, 128}, rng, 0.5f)}};
  auto before = Session::Create(*graph, SessionOptions{});
  auto after = Session::Create(**loaded, SessionOptions{});
  ASSERT_TRUE(before.ok() && after.ok());
  auto out_before = (*before)->Run(inputs);
  auto out_after = (*after)->Run(inputs);
  ASSERT_TRUE(out_before.ok()) << out_before.status().ToString();
  ASSERT_TRUE(out_after.ok()) << out_after.status().ToString();
  for (size_t i = 0; i < 2; ++i) {
    const Tensor& a = (*out_before)[i].second;
    const Tensor& b = (*out_after)[i].second;
    ASSERT_EQ(a.sizes(), b.sizes());
    for (int64_t k = 0; k < a.num_elements(); ++k) {
      EXPECT_NEAR(a.data<float>()[k], b.data<float>()[k], 1e-6f);
    }
  }
}

TEST(ControlFlowUpgradeTest, NestedBodiesSurviveAnUpgrade) {
  std::unique_ptr<ir::Graph> graph = testing::BuildLoopWithIf();
  auto changed = passes::UpgradeOpset(*graph, passes::UpgradeOpsetOptions{18});
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = (*session)->Run({{"x", Tensor::FromVector<float>({2}, {1, 2})},
                              {"scale", Tensor::FromVector<float>({1}, {3})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].second.data<float>()[0], 4.0f);
  EXPECT_EQ((*out)[0].second.data<float>()[1], 8.0f);
}

}  // namespace
}  // namespace qtune::runtime
