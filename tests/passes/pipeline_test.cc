#include "passes/pipeline.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "reference_check.h"

namespace qtune::passes {
namespace {

using testing::AddInit;
using testing::AddOp;
using testing::CountOps;
using testing::F32;
using testing::OutputNames;

Tensor Vec(std::vector<float> values) {
  return Tensor::FromVector<float>({static_cast<int64_t>(values.size())}, values);
}

// Constant W -> Identity -> Conv -> BN -> Mul by (c1 + c2) -> Identity -> "y", plus a dead
// Neg. Every default pass has something to do.
void BuildMixedGraph(ir::Graph& graph) {
  graph.info().opset_imports[""] = 13;
  ir::Value* x = *graph.AddInput("x", F32({1, 1, 2, 2}));
  ir::Node* w = AddOp(graph, {.op_type = "Constant",
                              .inputs = {},
                              .outputs = {"w"},
                              .attributes = {ir::Attribute::TensorValue(
                                  "value", Tensor::FromVector<float>({2, 1, 1, 1}, {2, -1}))}});
  ir::Node* w_copy =
      AddOp(graph, {.op_type = "Identity", .inputs = {w->output(0)}, .outputs = {"w_copy"}});
  ir::Node* conv =
      AddOp(graph, {.op_type = "Conv", .inputs = {x, w_copy->output(0)}, .outputs = {"conv_out"}});
  ir::Node* bn = AddOp(
      graph, {.op_type = "BatchNormalization",
              .inputs = {conv->output(0), AddInit(graph, "scale", Vec({1, 2})),
                         AddInit(graph, "bias", Vec({0.5f, 0})),
                         AddInit(graph, "mean", Vec({0, 1})), AddInit(graph, "var", Vec({1, 1}))},
              .outputs = {"bn_out"}});
  ir::Node* k =
      AddOp(graph, {.op_type = "Add",
                    .inputs = {AddInit(graph, "c1", Vec({2})), AddInit(graph, "c2", Vec({3}))},
                    .outputs = {"k"}});
  ir::Node* mul =
      AddOp(graph, {.op_type = "Mul", .inputs = {bn->output(0), k->output(0)}, .outputs = {"m"}});
  ir::Node* out =
      AddOp(graph, {.op_type = "Identity", .inputs = {mul->output(0)}, .outputs = {"y"}});
  AddOp(graph, {.op_type = "Neg", .inputs = {conv->output(0)}, .outputs = {"dead"}});
  ASSERT_TRUE(graph.AddOutput(out->output(0)).ok());
}

TEST(PipelineTest, DefaultOrderIsTheDocumentedOne) {
  std::vector<std::string_view> names;
  for (const PassEntry& entry : DefaultPipeline()) names.push_back(entry.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"constants_to_initializers", "remove_identity",
                                                  "fold_constants", "fold_batchnorm",
                                                  "fold_conv_affine", "remove_dead_nodes"}));
}

// Conv -> BN -> Mul by the folded constant 5: BN and then the Mul fold into the Conv.
TEST(PipelineTest, MixedGraphShrinksToOneConv) {
  ir::Graph graph;
  BuildMixedGraph(graph);
  ASSERT_EQ(graph.num_nodes(), 8u);
  PassOptions options = testing::TestOptions();
  options.evaluator = testing::ToyEvaluator{};

  auto report = RunPipeline(graph, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->converged);
  EXPECT_EQ(report->nodes_before, 8u);
  EXPECT_EQ(report->nodes_after, 1u);
  EXPECT_EQ(CountOps(graph, "Conv"), 1);
  EXPECT_EQ(CountOps(graph, "Mul"), 0);
  EXPECT_EQ(OutputNames(graph), std::vector<std::string>{"y"});
  for (const PassEntry& entry : DefaultPipeline()) {
    EXPECT_GE(report->TimesChanged(entry.name), 1) << entry.name;
  }
  // Only the initializers the conv reads remain: the scaled weights and the folded bias.
  EXPECT_EQ(graph.initializers().size(), 2u);
  EXPECT_FALSE(report->ToString().empty());
  EXPECT_VERIFIES(graph);
}

TEST(PipelineTest, MixedGraphOutputsAreUnchangedWithReferenceKernels) {
  ir::Graph graph;
  BuildMixedGraph(graph);
  std::unique_ptr<ir::Graph> before = graph.Clone();
  auto report = RunPipeline(graph, testing::ReferenceOptions());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->nodes_after, 1u);
  EXPECT_EQ(OutputNames(graph), std::vector<std::string>{"y"});
  testing::ExpectSameOutputs(*before, graph);
}

TEST(PipelineTest, SecondRunChangesNothing) {
  ir::Graph graph;
  BuildMixedGraph(graph);
  PassOptions options = testing::TestOptions();
  options.evaluator = testing::ToyEvaluator{};
  ASSERT_TRUE(RunPipeline(graph, options).ok());
  auto again = RunPipeline(graph, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->rounds, 1);
  EXPECT_TRUE(again->converged);
}

StatusOr<bool> MakeCycle(ir::Graph& graph, const PassOptions&) {
  std::vector<ir::Node*> nodes = graph.nodes();
  graph.SetNodeInput(nodes.front(), 0, nodes.back()->output(0));
  return true;
}

TEST(PipelineTest, VerifyFailureNamesThePassThatBrokeTheGraph) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({1}));
  ir::Node* a = AddOp(graph, {.op_type = "Relu", .inputs = {x}, .outputs = {"a"}});
  ir::Node* b = AddOp(graph, {.op_type = "Neg", .inputs = {a->output(0)}, .outputs = {"b"}});
  ASSERT_TRUE(graph.AddOutput(b->output(0)).ok());
  const PassEntry passes[] = {{"make_cycle", &MakeCycle}};
  auto report = RunPasses(graph, passes, testing::TestOptions());
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("after pass make_cycle"), std::string::npos)
      << report.status().message();
}

StatusOr<bool> Fails(ir::Graph&, const PassOptions&) { return InternalError("boom"); }

TEST(PipelineTest, PassErrorIsPrefixedWithThePassName) {
  ir::Graph graph;
  const PassEntry passes[] = {{"failing_pass", &Fails}};
  auto report = RunPasses(graph, passes, testing::TestOptions());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInternal);
  EXPECT_NE(report.status().message().find("failing_pass"), std::string::npos);
  EXPECT_NE(report.status().message().find("boom"), std::string::npos);
}

StatusOr<bool> AlwaysChanges(ir::Graph&, const PassOptions&) { return true; }

TEST(PipelineTest, NonConvergingPassListStopsAtTheRoundLimit) {
  ir::Graph graph;
  const PassEntry passes[] = {{"always_changes", &AlwaysChanges}};
  PassOptions options = testing::TestOptions();
  options.max_pipeline_iterations = 3;
  auto report = RunPasses(graph, passes, options);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->converged);
  EXPECT_EQ(report->rounds, 3);
  EXPECT_EQ(report->runs.size(), 3u);
}

}  // namespace
}  // namespace qtune::passes
