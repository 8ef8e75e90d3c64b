#include "passes/constants_to_initializers.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "reference_check.h"

namespace qtune::passes {
namespace {

using testing::AddOp;
using testing::CountOps;
using testing::F32;
using testing::Floats;
using testing::OutputNames;

ir::Node* AddConstant(ir::Graph& graph, const std::string& name, ir::Attribute value) {
  return AddOp(
      graph,
      {.op_type = "Constant", .inputs = {}, .outputs = {name}, .attributes = {std::move(value)}});
}

TEST(ConstantsToInitializersTest, TensorConstantBecomesInitializerOfTheSameName) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({2}));
  Tensor data = Tensor::FromVector<float>({2}, {1.5f, -2.0f});
  ir::Node* c = AddConstant(graph, "c", ir::Attribute::TensorValue("value", data));
  ir::Node* add = AddOp(graph, {.op_type = "Add", .inputs = {x, c->output(0)}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(add->output(0)).ok());

  auto changed = ConstantsToInitializers(graph, testing::TestOptions());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOps(graph, "Constant"), 0);
  EXPECT_EQ(CountOps(graph, "Add"), 1);
  ir::Value* init = graph.FindValue("c");
  ASSERT_NE(init, nullptr);
  ASSERT_TRUE(init->is_initializer());
  EXPECT_EQ(add->input(1), init);
  EXPECT_EQ(Floats(init->initializer()), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(OutputNames(graph), std::vector<std::string>{"y"});
  EXPECT_VERIFIES(graph);
}

TEST(ConstantsToInitializersTest, ScalarAndListAttributesBecomeTensors) {
  ir::Graph graph;
  std::vector<ir::Node*> constants = {
      AddConstant(graph, "f", ir::Attribute::Float("value_float", 0.5f)),
      AddConstant(graph, "fs", ir::Attribute::Floats("value_floats", {1, 2, 3})),
      AddConstant(graph, "i", ir::Attribute::Int("value_int", 7)),
      AddConstant(graph, "is", ir::Attribute::Ints("value_ints", {4, 5})),
  };
  for (ir::Node* c : constants) ASSERT_TRUE(graph.AddOutput(c->output(0)).ok());

  ASSERT_TRUE(*ConstantsToInitializers(graph, testing::TestOptions()));
  EXPECT_EQ(graph.num_nodes(), 0u);
  EXPECT_EQ(OutputNames(graph), (std::vector<std::string>{"f", "fs", "i", "is"}));
  const Tensor& f = graph.FindValue("f")->initializer();
  EXPECT_EQ(f.dtype(), DataType::kFloat32);
  EXPECT_EQ(f.rank(), 0u);
  EXPECT_EQ(f.data<float>()[0], 0.5f);
  const Tensor& fs = graph.FindValue("fs")->initializer();
  EXPECT_EQ(fs.sizes(), std::vector<int64_t>{3});
  const Tensor& i = graph.FindValue("i")->initializer();
  EXPECT_EQ(i.dtype(), DataType::kInt64);
  EXPECT_EQ(i.rank(), 0u);
  EXPECT_EQ(i.data<int64_t>()[0], 7);
  const Tensor& is = graph.FindValue("is")->initializer();
  EXPECT_EQ(is.dtype(), DataType::kInt64);
  EXPECT_EQ(is.data<int64_t>()[1], 5);
  EXPECT_VERIFIES(graph);
}

TEST(ConstantsToInitializersTest, StringAndSparseConstantsStay) {
  ir::Graph graph;
  ir::Node* s = AddConstant(graph, "s", ir::Attribute::String("value_string", "hello"));
  ir::Node* ss = AddConstant(graph, "ss", ir::Attribute::Strings("value_strings", {"a"}));
  ir::Attribute sparse = ir::Attribute::TensorValue("sparse_value", Tensor::Scalar<float>(1));
  ir::Node* sp = AddConstant(graph, "sp", sparse);
  for (ir::Node* c : {s, ss, sp}) ASSERT_TRUE(graph.AddOutput(c->output(0)).ok());

  auto changed = ConstantsToInitializers(graph, testing::TestOptions());
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOps(graph, "Constant"), 3);
  EXPECT_TRUE(graph.initializers().empty());
}

TEST(ConstantsToInitializersTest, UnreadConstantIsLeftForDeadNodeRemoval) {
  ir::Graph graph;
  AddConstant(graph, "unused", ir::Attribute::Float("value_float", 1));
  EXPECT_FALSE(*ConstantsToInitializers(graph, testing::TestOptions()));
  EXPECT_EQ(CountOps(graph, "Constant"), 1);
}

TEST(ConstantsToInitializersTest, CustomDomainConstantStays) {
  ir::Graph graph;
  ir::Node* c = AddOp(graph, {.op_type = "Constant",
                              .inputs = {},
                              .outputs = {"c"},
                              .attributes = {ir::Attribute::Float("value_float", 1)},
                              .domain = "com.example"});
  ASSERT_TRUE(graph.AddOutput(c->output(0)).ok());
  EXPECT_FALSE(*ConstantsToInitializers(graph, testing::TestOptions()));
  EXPECT_EQ(graph.num_nodes(), 1u);
}

TEST(ConstantsToInitializersTest, ConstantReadBySubgraphKeepsItsName) {
  ir::Graph graph;
  ir::Value* cond = *graph.AddInput("cond", {DataType::kBool, Shape()});
  ir::Node* c = AddConstant(graph, "c", ir::Attribute::Float("value_float", 3));
  auto node = graph.AddNode({.op_type = "If",
                             .name = "if",
                             .inputs = {cond},
                             .output_names = {"y"},
                             .implicit_inputs = {c->output(0)}});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(graph.AddOutput((*node)->output(0)).ok());

  EXPECT_TRUE(*ConstantsToInitializers(graph, testing::TestOptions()));
  ir::Value* init = graph.FindValue("c");
  ASSERT_NE(init, nullptr);
  EXPECT_TRUE(init->is_initializer());
  EXPECT_EQ((*node)->implicit_inputs()[0], init);
  EXPECT_VERIFIES(graph);
}

TEST(ConstantsToInitializersTest, OutputsAreUnchanged) {
  ir::Graph graph;
  graph.info().opset_imports[""] = 13;
  ir::Value* x = *graph.AddInput("x", F32({2, 3}));
  ir::Node* c = AddConstant(
      graph, "c", ir::Attribute::TensorValue("value", testing::RandomTensor({3}, /*seed=*/7)));
  ir::Node* k = AddConstant(graph, "k", ir::Attribute::Float("value_float", -1.5f));
  ir::Node* add = AddOp(graph, {.op_type = "Add", .inputs = {x, c->output(0)}, .outputs = {"a"}});
  ir::Node* mul =
      AddOp(graph, {.op_type = "Mul", .inputs = {add->output(0), k->output(0)}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(mul->output(0)).ok());
  ASSERT_TRUE(graph.AddOutput(c->output(0)).ok());
  std::unique_ptr<ir::Graph> before = graph.Clone();

  ASSERT_TRUE(*ConstantsToInitializers(graph, testing::ReferenceOptions()));
  EXPECT_EQ(CountOps(graph, "Constant"), 0);
  EXPECT_EQ(OutputNames(graph), (std::vector<std::string>{"y", "c"}));
  testing::ExpectSameOutputs(*before, graph);
}

}  // namespace
}  // namespace qtune::passes
