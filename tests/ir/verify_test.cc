// Verify(): each invariant, broken on purpose, is reported with the offending name.
#include "ir/verify.h"

#include <gtest/gtest.h>

#include "ir/builder.h"

namespace qtune::ir {
namespace {

TensorType F32(std::vector<int64_t> sizes) { return {DataType::kFloat32, Shape::FromSizes(sizes)}; }

void ExpectInvalid(const Graph& g, const std::string& needle) {
  Status s = Verify(g);
  ASSERT_FALSE(s.ok()) << "expected a failure mentioning " << needle;
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
}

TEST(VerifyTest, ValidGraphPasses) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1, 4});
  Value* w = b.Initializer("w", Tensor::FromVector<float>({4}, {1, 2, 3, 4}));
  b.Output(b.Op("Mul", {x, w}));
  auto g = b.Build();
  EXPECT_TRUE(Verify(*g).ok());
}

TEST(VerifyTest, EmptyGraphPasses) {
  Graph g;
  EXPECT_TRUE(Verify(g).ok());
}

TEST(VerifyTest, CycleIsReported) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  Node* a = *g.AddNode(
      {.op_type = "Add", .name = "a", .inputs = {x, nullptr}, .output_names = {"a_out"}});
  Node* b = *g.AddNode(
      {.op_type = "Relu", .name = "b", .inputs = {a->output(0)}, .output_names = {"b_out"}});
  g.SetNodeInput(a, 1, b->output(0));
  ExpectInvalid(g, "cycle");
}

TEST(VerifyTest, DuplicateNodeNameIsReported) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  Node* a = *g.AddNode({.op_type = "Relu", .name = "same", .inputs = {x}, .output_names = {"a"}});
  (void)*g.AddNode(
      {.op_type = "Relu", .name = "same", .inputs = {a->output(0)}, .output_names = {"b"}});
  ExpectInvalid(g, "'same'");
}

TEST(VerifyTest, UnnamedNodesMayRepeat) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  Node* a = *g.AddNode({.op_type = "Relu", .inputs = {x}, .output_names = {"a"}});
  (void)*g.AddNode({.op_type = "Relu", .inputs = {a->output(0)}, .output_names = {"b"}});
  EXPECT_TRUE(Verify(g).ok());
}

TEST(VerifyTest, EmptyValueNameIsReported) {
  Graph g;
  (void)*g.AddInput("", F32({1}));
  ExpectInvalid(g, "empty name");
}

TEST(VerifyTest, InitializerTypeMismatchIsReported) {
  Graph g;
  Value* w = *g.AddInitializer("w", Tensor::FromVector<float>({2}, {1, 2}));
  w->set_type(F32({3}));
  ExpectInvalid(g, "'w'");
  w->set_type({DataType::kInt8, Shape::FromSizes({2})});
  ExpectInvalid(g, "'w'");
}

TEST(VerifyTest, UnknownDataTypeIsReported) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  x->set_type({static_cast<DataType>(99), std::nullopt});
  ExpectInvalid(g, "unknown data type 99");
}

TEST(VerifyTest, NodeOutputWithUnknownDataTypeIsReported) {
  Graph g;
  Value* x = *g.AddInput("x", F32({1}));
  Node* n = *g.AddNode({.op_type = "Relu", .name = "r", .inputs = {x}, .output_names = {"y"}});
  n->output(0)->set_type({static_cast<DataType>(-3), std::nullopt});
  ExpectInvalid(g, "'y'");
}

TEST(VerifyTest, InputFromAnotherGraphIsReported) {
  Graph other;
  Value* foreign = *other.AddInput("x", F32({1}));
  Graph g;
  (void)*g.AddInput("x", F32({1}));
  (void)*g.AddNode({.op_type = "Relu", .name = "r", .inputs = {foreign}, .output_names = {"y"}});
  ExpectInvalid(g, "does not belong to this graph");
}

TEST(VerifyTest, ImplicitInputFromAnotherGraphIsReported) {
  Graph other;
  Value* foreign = *other.AddInput("outer", F32({1}));
  Graph g;
  Value* c = *g.AddInput("c", {DataType::kBool, Shape()});
  Node* n = *g.AddNode({.op_type = "If", .name = "if", .inputs = {c}, .output_names = {"y"}});
  g.SetImplicitInputs(n, {foreign});
  ExpectInvalid(g, "'outer'");
}

TEST(VerifyTest, OutputFromAnotherGraphIsReported) {
  Graph other;
  Value* foreign = *other.AddInput("x", F32({1}));
  Graph g;
  ASSERT_TRUE(g.AddOutput(foreign).ok());
  ExpectInvalid(g, "graph output 'x'");
}

TEST(VerifyTest, RenamedValuesStayConsistent) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1});
  Value* y = b.Op("Relu", {x});
  b.Output(y);
  auto g = b.Build();
  ASSERT_TRUE(g->RenameValue(g->FindValue(y->name()), "renamed").ok());
  EXPECT_TRUE(Verify(*g).ok());
}

TEST(VerifyTest, MutationVerbsKeepTheGraphValid) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1});
  Value* id = b.Op("Identity", {x});
  Value* y = b.Op("Relu", {id});
  b.Output(b.Op("Neg", {y}));
  auto g = b.Build();
  Value* id_value = g->FindValue(id->name());
  Node* id_node = id_value->producer();
  g->ReplaceAllUsesWith(id_value, g->FindValue("x"));
  ASSERT_TRUE(g->RemoveNode(id_node).ok());
  EXPECT_TRUE(Verify(*g).ok());
}

}  // namespace
}  // namespace qtune::ir
