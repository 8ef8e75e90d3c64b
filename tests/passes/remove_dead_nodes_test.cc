#include "passes/remove_dead_nodes.h"

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

TEST(RemoveDeadNodesTest, DeadBranchGoesInOneCall) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* relu = AddOp(graph, {.op_type = "Relu", .inputs = {x}, .outputs = {"r"}});
  ir::Node* neg = AddOp(graph, {.op_type = "Neg", .inputs = {relu->output(0)}, .outputs = {"n"}});
  AddOp(graph, {.op_type = "Abs", .inputs = {neg->output(0)}, .outputs = {"a"}});
  ASSERT_TRUE(graph.AddOutput(relu->output(0)).ok());

  auto changed = RemoveDeadNodes(graph, testing::TestOptions());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(graph.num_nodes(), 1u);
  EXPECT_EQ(CountOps(graph, "Relu"), 1);
  EXPECT_EQ(OutputNames(graph), std::vector<std::string>{"r"});
  EXPECT_VERIFIES(graph);
}

TEST(RemoveDeadNodesTest, DeadChainListedProducerLastStillGoes) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* late = AddOp(graph, {.op_type = "Neg", .inputs = {nullptr}, .outputs = {"late"}});
  ir::Node* early = AddOp(graph, {.op_type = "Relu", .inputs = {x}, .outputs = {"early"}});
  graph.SetNodeInput(late, 0, early->output(0));
  ir::Node* live = AddOp(graph, {.op_type = "Abs", .inputs = {x}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(live->output(0)).ok());

  EXPECT_TRUE(*RemoveDeadNodes(graph, testing::TestOptions()));
  EXPECT_EQ(graph.num_nodes(), 1u);
  EXPECT_VERIFIES(graph);
}

TEST(RemoveDeadNodesTest, NodeWithOneLiveOutputStays) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({4}));
  ir::Node* split = AddOp(graph, {.op_type = "Split", .inputs = {x}, .outputs = {"lo", "hi"}});
  ASSERT_TRUE(graph.AddOutput(split->output(1)).ok());
  EXPECT_FALSE(*RemoveDeadNodes(graph, testing::TestOptions()));
  EXPECT_EQ(graph.num_nodes(), 1u);
}

TEST(RemoveDeadNodesTest, UnreadInitializersGoButGraphOutputInitializersStay) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({1}));
  ir::Value* used = AddInit(graph, "used", Tensor::Scalar<float>(1));
  AddInit(graph, "unused", Tensor::Scalar<float>(2));
  ir::Value* output_init = AddInit(graph, "output_init", Tensor::Scalar<float>(3));
  ir::Node* add = AddOp(graph, {.op_type = "Add", .inputs = {x, used}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(add->output(0)).ok());
  ASSERT_TRUE(graph.AddOutput(output_init).ok());

  EXPECT_TRUE(*RemoveDeadNodes(graph, testing::TestOptions()));
  EXPECT_EQ(graph.FindValue("unused"), nullptr);
  EXPECT_NE(graph.FindValue("used"), nullptr);
  EXPECT_NE(graph.FindValue("output_init"), nullptr);
  EXPECT_EQ(graph.initializers().size(), 2u);
  EXPECT_EQ(graph.inputs().size(), 1u);
  EXPECT_VERIFIES(graph);
}

TEST(RemoveDeadNodesTest, UnreadGraphInputsStay) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({1}));
  (void)*graph.AddInput("ignored", F32({1}));
  ir::Node* relu = AddOp(graph, {.op_type = "Relu", .inputs = {x}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(relu->output(0)).ok());
  EXPECT_FALSE(*RemoveDeadNodes(graph, testing::TestOptions()));
  EXPECT_EQ(graph.inputs().size(), 2u);
}

TEST(RemoveDeadNodesTest, DeadCustomDomainNodeGoes) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({1}));
  AddOp(graph, {.op_type = "MyOp", .inputs = {x}, .outputs = {"z"}, .domain = "com.example"});
  ir::Node* relu = AddOp(graph, {.op_type = "Relu", .inputs = {x}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(relu->output(0)).ok());
  EXPECT_TRUE(*RemoveDeadNodes(graph, testing::TestOptions()));
  EXPECT_EQ(CountOps(graph, "MyOp"), 0);
  EXPECT_VERIFIES(graph);
}

TEST(RemoveDeadNodesTest, NodeReadOnlyBySubgraphStays) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({1}));
  ir::Value* cond = *graph.AddInput("cond", {DataType::kBool, Shape()});
  ir::Node* relu = AddOp(graph, {.op_type = "Relu", .inputs = {x}, .outputs = {"r"}});
  auto node = graph.AddNode({.op_type = "If",
                             .name = "if",
                             .inputs = {cond},
                             .output_names = {"y"},
                             .implicit_inputs = {relu->output(0)}});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(graph.AddOutput((*node)->output(0)).ok());
  EXPECT_FALSE(*RemoveDeadNodes(graph, testing::TestOptions()));
  EXPECT_EQ(graph.num_nodes(), 2u);
}

TEST(RemoveDeadNodesTest, OutputsAreUnchanged) {
  ir::Graph graph;
  graph.info().opset_imports[""] = 13;
  ir::Value* x = *graph.AddInput("x", F32({2, 5}));
  ir::Value* c = AddInit(graph, "c", testing::RandomTensor({5}, /*seed=*/3));
  AddInit(graph, "orphan", testing::RandomTensor({5}, /*seed=*/4));
  ir::Node* add = AddOp(graph, {.op_type = "Add", .inputs = {x, c}, .outputs = {"a"}});
  ir::Node* neg = AddOp(graph, {.op_type = "Neg", .inputs = {add->output(0)}, .outputs = {"n"}});
  AddOp(graph, {.op_type = "Abs", .inputs = {neg->output(0)}, .outputs = {"dead"}});
  ir::Node* relu = AddOp(graph, {.op_type = "Relu", .inputs = {add->output(0)}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(relu->output(0)).ok());
  std::unique_ptr<ir::Graph> before = graph.Clone();

  ASSERT_TRUE(*RemoveDeadNodes(graph, testing::ReferenceOptions()));
  EXPECT_EQ(graph.num_nodes(), 2u);
  EXPECT_EQ(graph.initializers().size(), 1u);
  EXPECT_EQ(OutputNames(graph), std::vector<std::string>{"y"});
  testing::ExpectSameOutputs(*before, graph);
}

}  // namespace
}  // namespace qtune::passes
