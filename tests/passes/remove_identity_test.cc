#include "passes/remove_identity.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "reference_check.h"

namespace qtune::passes {
namespace {

using testing::AddOp;
using testing::CountOps;
using testing::F32;
using testing::OutputNames;

ir::Node* Unary(ir::Graph& graph, const std::string& op, ir::Value* in, const std::string& out) {
  return AddOp(graph, {.op_type = op, .inputs = {in}, .outputs = {out}});
}

TEST(RemoveIdentityTest, ChainCollapsesOntoTheProducer) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* relu = Unary(graph, "Relu", x, "r");
  ir::Node* id1 = Unary(graph, "Identity", relu->output(0), "a");
  ir::Node* id2 = Unary(graph, "Identity", id1->output(0), "b");
  ir::Node* neg = Unary(graph, "Neg", id2->output(0), "y");
  ASSERT_TRUE(graph.AddOutput(neg->output(0)).ok());

  auto changed = RemoveIdentity(graph, testing::TestOptions());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOps(graph, "Identity"), 0);
  EXPECT_EQ(graph.num_nodes(), 2u);
  EXPECT_EQ(neg->input(0), relu->output(0));
  EXPECT_EQ(OutputNames(graph), std::vector<std::string>{"y"});
  EXPECT_VERIFIES(graph);
}

TEST(RemoveIdentityTest, GraphOutputNameMovesToTheProducer) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* relu = Unary(graph, "Relu", x, "r");
  ir::Node* id1 = Unary(graph, "Identity", relu->output(0), "a");
  ir::Node* id2 = Unary(graph, "Identity", id1->output(0), "out");
  ir::Node* neg = Unary(graph, "Neg", relu->output(0), "other");
  ASSERT_TRUE(graph.AddOutput(id2->output(0)).ok());
  ASSERT_TRUE(graph.AddOutput(neg->output(0)).ok());

  ASSERT_TRUE(*RemoveIdentity(graph, testing::TestOptions()));
  EXPECT_EQ(CountOps(graph, "Identity"), 0);
  EXPECT_EQ(OutputNames(graph), (std::vector<std::string>{"out", "other"}));
  EXPECT_EQ(relu->output(0)->name(), "out");
  EXPECT_EQ(neg->input(0), relu->output(0));
  EXPECT_VERIFIES(graph);
}

TEST(RemoveIdentityTest, IdentityFromGraphInputToGraphOutputStays) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* id = Unary(graph, "Identity", x, "y");
  ASSERT_TRUE(graph.AddOutput(id->output(0)).ok());
  EXPECT_FALSE(*RemoveIdentity(graph, testing::TestOptions()));
  EXPECT_EQ(CountOps(graph, "Identity"), 1);
}

TEST(RemoveIdentityTest, IdentityBetweenTwoGraphOutputsStays) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* relu = Unary(graph, "Relu", x, "r");
  ir::Node* id = Unary(graph, "Identity", relu->output(0), "copy");
  ASSERT_TRUE(graph.AddOutput(relu->output(0)).ok());
  ASSERT_TRUE(graph.AddOutput(id->output(0)).ok());
  EXPECT_FALSE(*RemoveIdentity(graph, testing::TestOptions()));
  EXPECT_EQ(OutputNames(graph), (std::vector<std::string>{"r", "copy"}));
}

TEST(RemoveIdentityTest, IdentityOfInitializerFeedingANodeIsRemoved) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({1}));
  ir::Value* w = testing::AddInit(graph, "w", Tensor::FromVector<float>({1}, {2.0f}));
  ir::Node* id = Unary(graph, "Identity", w, "w_copy");
  ir::Node* mul = AddOp(graph, {.op_type = "Mul", .inputs = {x, id->output(0)}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(mul->output(0)).ok());
  EXPECT_TRUE(*RemoveIdentity(graph, testing::TestOptions()));
  EXPECT_EQ(mul->input(1), w);
  EXPECT_VERIFIES(graph);
}

TEST(RemoveIdentityTest, IdentityReadBySubgraphStays) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({1}));
  ir::Value* cond = *graph.AddInput("cond", {DataType::kBool, Shape()});
  ir::Node* id = Unary(graph, "Identity", x, "seen_by_name");
  auto node = graph.AddNode({.op_type = "If",
                             .name = "if",
                             .inputs = {cond},
                             .output_names = {"y"},
                             .implicit_inputs = {id->output(0)}});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(graph.AddOutput((*node)->output(0)).ok());
  EXPECT_FALSE(*RemoveIdentity(graph, testing::TestOptions()));
  EXPECT_EQ(CountOps(graph, "Identity"), 1);
}

TEST(RemoveIdentityTest, InferenceDropoutIsRemoved) {
  ir::Graph graph;
  graph.info().opset_imports[""] = 13;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* relu = Unary(graph, "Relu", x, "r");
  ir::Value* ratio = testing::AddInit(graph, "ratio", Tensor::Scalar<float>(0.5f));
  ir::Value* training = testing::AddInit(graph, "training", Tensor::Scalar<bool>(false));
  ir::Node* dropout = AddOp(graph, {.op_type = "Dropout",
                                    .inputs = {relu->output(0), ratio, training},
                                    .outputs = {"d", "mask"}});
  ir::Node* neg = Unary(graph, "Neg", dropout->output(0), "y");
  ASSERT_TRUE(graph.AddOutput(neg->output(0)).ok());

  EXPECT_TRUE(*RemoveIdentity(graph, testing::TestOptions()));
  EXPECT_EQ(CountOps(graph, "Dropout"), 0);
  EXPECT_EQ(neg->input(0), relu->output(0));
  EXPECT_VERIFIES(graph);
}

TEST(RemoveIdentityTest, DropoutWithReadMaskOrTrainingModeStays) {
  ir::Graph graph;
  graph.info().opset_imports[""] = 13;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* masked = AddOp(graph, {.op_type = "Dropout", .inputs = {x}, .outputs = {"d1", "m1"}});
  ir::Value* training = testing::AddInit(graph, "training", Tensor::Scalar<bool>(true));
  ir::Node* trained =
      AddOp(graph, {.op_type = "Dropout", .inputs = {x, nullptr, training}, .outputs = {"d2"}});
  ASSERT_TRUE(graph.AddOutput(masked->output(0)).ok());
  ASSERT_TRUE(graph.AddOutput(masked->output(1)).ok());
  ir::Node* neg = Unary(graph, "Neg", trained->output(0), "y");
  ASSERT_TRUE(graph.AddOutput(neg->output(0)).ok());

  EXPECT_FALSE(*RemoveIdentity(graph, testing::TestOptions()));
  EXPECT_EQ(CountOps(graph, "Dropout"), 2);
}

TEST(RemoveIdentityTest, OutputsAreUnchanged) {
  ir::Graph graph;
  graph.info().opset_imports[""] = 13;
  ir::Value* x = *graph.AddInput("x", F32({3, 4}));
  ir::Node* relu = Unary(graph, "Relu", x, "r");
  ir::Node* id1 = Unary(graph, "Identity", relu->output(0), "a");
  ir::Node* dropout = AddOp(
      graph, {.op_type = "Dropout", .inputs = {id1->output(0)}, .outputs = {"d", "unused_mask"}});
  ir::Node* neg = Unary(graph, "Neg", dropout->output(0), "n");
  ir::Node* out = Unary(graph, "Identity", neg->output(0), "y");
  ir::Node* passthrough = Unary(graph, "Identity", x, "x_copy");
  ASSERT_TRUE(graph.AddOutput(out->output(0)).ok());
  ASSERT_TRUE(graph.AddOutput(passthrough->output(0)).ok());
  std::unique_ptr<ir::Graph> before = graph.Clone();

  ASSERT_TRUE(*RemoveIdentity(graph, testing::ReferenceOptions()));
  EXPECT_EQ(CountOps(graph, "Identity"), 1);  // x -> x_copy: both names are interface
  EXPECT_EQ(CountOps(graph, "Dropout"), 0);
  EXPECT_EQ(graph.num_nodes(), 3u);
  EXPECT_EQ(OutputNames(graph), (std::vector<std::string>{"y", "x_copy"}));
  testing::ExpectSameOutputs(*before, graph);
}

}  // namespace
}  // namespace qtune::passes
