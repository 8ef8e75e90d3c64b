#include "ir/graph.h"

#include <gtest/gtest.h>

namespace qtune::ir {
namespace {

TensorType F32(std::vector<int64_t> sizes) { return {DataType::kFloat32, Shape::FromSizes(sizes)}; }

Node* Add(Graph& g, std::string op, std::vector<Value*> in, std::string out) {
  auto n = g.AddNode({.op_type = op, .name = out + "_node", .inputs = in, .output_names = {out}});
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  return *n;
}

TEST(GraphTest, AddNodeMaintainsUseLists) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1, 4}));
  Node* relu = Add(g, "Relu", {x}, "y");
  Node* neg = Add(g, "Neg", {relu->output(0)}, "z");
  ASSERT_TRUE(g.AddOutput(neg->output(0)).ok());
  ASSERT_EQ(x->uses().size(), 1u);
  EXPECT_EQ(x->uses()[0].node, relu);
  EXPECT_EQ(relu->output(0)->producer(), relu);
  EXPECT_TRUE(neg->output(0)->is_graph_output());
}

TEST(GraphTest, DuplicateOutputNameIsRejected) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  auto n = g.AddNode({.op_type = "Relu", .inputs = {x}, .output_names = {"x"}});
  EXPECT_EQ(n.status().code(), StatusCode::kAlreadyExists);
}

TEST(GraphTest, ReplaceAllUsesMovesGraphOutputsToo) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  Node* id = Add(g, "Identity", {x}, "y");
  Node* relu = Add(g, "Relu", {id->output(0)}, "z");
  ASSERT_TRUE(g.AddOutput(id->output(0)).ok());
  g.ReplaceAllUsesWith(id->output(0), x);
  EXPECT_EQ(relu->input(0), x);
  EXPECT_EQ(g.outputs()[0], x);
  EXPECT_TRUE(g.RemoveNode(id).ok());
  EXPECT_EQ(g.FindValue("y"), nullptr);
  EXPECT_EQ(x->uses().size(), 1u);
}

TEST(GraphTest, RemoveNodeWithLiveOutputFails) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  Node* a = Add(g, "Relu", {x}, "a");
  Add(g, "Relu", {a->output(0)}, "b");
  EXPECT_EQ(g.RemoveNode(a).code(), StatusCode::kFailedPrecondition);
}

TEST(GraphTest, TopologicalOrderPutsProducersFirstAndFindsCycles) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  Node* late = Add(g, "Relu", {nullptr}, "late");
  Node* early = Add(g, "Relu", {x}, "early");
  g.SetNodeInput(late, 0, early->output(0));
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok());
  EXPECT_EQ((*order)[0], early);
  g.SetNodeInput(early, 0, late->output(0));
  auto cyclic = g.TopologicalOrder();
  EXPECT_EQ(cyclic.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cyclic.status().message().find("cycle"), std::string::npos);
}

TEST(GraphTest, RenameAndUniqueNames) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  EXPECT_EQ(g.UniqueValueName("x"), "x_1");
  ASSERT_TRUE(g.RenameValue(x, "input").ok());
  EXPECT_EQ(g.FindValue("input"), x);
  EXPECT_EQ(g.FindValue("x"), nullptr);
  (void)g.AddInput("other", F32({1}));
  EXPECT_EQ(g.RenameValue(x, "other").code(), StatusCode::kAlreadyExists);
}

TEST(GraphTest, CloneIsIndependent) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  Value* w = *g.AddInitializer("w", Tensor::FromVector<float>({1}, {2}));
  Node* mul = *g.AddNode({.op_type = "Mul", .inputs = {x, w}, .output_names = {"y"}});
  ASSERT_TRUE(g.AddOutput(mul->output(0)).ok());
  auto copy = g.Clone();
  EXPECT_EQ(copy->num_nodes(), 1u);
  EXPECT_NE(copy->FindValue("y"), mul->output(0));
  EXPECT_TRUE(copy->FindValue("w")->is_initializer());
  EXPECT_EQ(copy->outputs()[0]->name(), "y");
}

TEST(GraphTest, SetImplicitInputsReplacesUses) {
  Graph g;
  Value* c = *g.AddInput("c", {DataType::kBool, Shape()});
  Value* a = *g.AddInput("a", F32({1}));
  Value* b = *g.AddInput("b", F32({1}));
  Node* n = *g.AddNode({.op_type = "If", .inputs = {c}, .output_names = {"y"}});
  g.SetImplicitInputs(n, {a, b});
  ASSERT_EQ(a->uses().size(), 1u);
  EXPECT_EQ(a->uses()[0], (Use{n, Use::kImplicitInput}));
  g.SetImplicitInputs(n, {b});
  EXPECT_TRUE(a->uses().empty());
  EXPECT_EQ(b->uses().size(), 1u);
  EXPECT_EQ(n->implicit_inputs(), (std::vector<Value*>{b}));
  EXPECT_TRUE(g.RemoveValue(a).ok());
}

}  // namespace
}  // namespace qtune::ir
