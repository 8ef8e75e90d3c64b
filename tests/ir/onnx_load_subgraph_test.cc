// Subgraph attributes (If/Loop/Scan bodies): kept as serialized GraphProtos, with the
// outer-scope values they read recorded as the node's implicit inputs.
#include <gtest/gtest.h>

#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"
#include "ir/verify.h"

namespace qtune::ir {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using testing::MakeModel;
using testing::Parse;

std::vector<std::string> Names(const std::vector<Value*>& values) {
  std::vector<std::string> out;
  for (Value* v : values) out.push_back(v->name());
  return out;
}

// then: out = Add(a, Loop body reading c and a then-local value); else: out = Neg(b).
onnx::ModelProto MakeIfModel() {
  onnx::ModelProto m = MakeModel(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddInput(g, "cond", {}, 9);
  AddInput(g, "a", {2});
  AddInput(g, "b", {2});
  AddInput(g, "c", {2});
  onnx::NodeProto* if_node = AddNode(g, "If", {"cond"}, {"out"}, "if");

  onnx::AttributeProto* then_attr = if_node->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* then_graph = then_attr->mutable_g();
  then_graph->set_name("then");
  AddNode(then_graph, "Relu", {"a"}, {"local"});
  onnx::NodeProto* loop = AddNode(then_graph, "Loop", {"", "cond"}, {"loop_out"});
  onnx::AttributeProto* body_attr = loop->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = body_attr->mutable_g();
  body->set_name("body");
  AddInput(body, "i", {}, 7);
  AddInput(body, "keep_going", {}, 9);
  AddNode(body, "Add", {"local", "c"}, {"sum"});  // then-local and top-level reads
  AddNode(body, "Identity", {"keep_going"}, {"keep_going_out"});
  AddOutput(body, "keep_going_out", {}, 9);
  AddOutput(body, "sum", {2});
  AddNode(then_graph, "Add", {"loop_out", "a"}, {"then_out"});
  AddOutput(then_graph, "then_out", {2});

  onnx::AttributeProto* else_attr = if_node->add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* else_graph = else_attr->mutable_g();
  else_graph->set_name("else");
  AddNode(else_graph, "Neg", {"b"}, {"else_out"});
  AddOutput(else_graph, "else_out", {2});
  AddOutput(g, "out", {2});
  return m;
}

TEST(OnnxLoadSubgraphTest, OuterScopeReadsBecomeImplicitInputs) {
  auto g = Parse(MakeIfModel());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Node* if_node = (*g)->FindNode("if");
  ASSERT_NE(if_node, nullptr);
  // "cond" is also the If's explicit input; the nested Loop reads it from the outer scope.
  EXPECT_EQ(Names(if_node->implicit_inputs()), (std::vector<std::string>{"a", "cond", "c", "b"}));
  ASSERT_EQ(if_node->attributes().size(), 2u);
  EXPECT_EQ(if_node->attributes()[0].type, AttributeType::kGraph);
  ASSERT_EQ(if_node->attributes()[0].graphs.size(), 1u);
  onnx::GraphProto then_graph;
  ASSERT_TRUE(then_graph.ParseFromString(if_node->attributes()[0].graphs[0]));
  EXPECT_EQ(then_graph.name(), "then");
  // Implicit inputs are uses: "c" is read only inside the nested loop body.
  Value* c = (*g)->FindValue("c");
  ASSERT_EQ(c->uses().size(), 1u);
  EXPECT_EQ(c->uses()[0].input_index, Use::kImplicitInput);
  EXPECT_TRUE(Verify(**g).ok());
}

TEST(OnnxLoadSubgraphTest, ImplicitInputsOrderProducersFirst) {
  onnx::ModelProto m = MakeIfModel();
  // Make "c" the output of a node listed after the If node.
  onnx::GraphProto* g = m.mutable_graph();
  g->mutable_input()->DeleteSubrange(3, 1);
  AddNode(g, "Relu", {"a"}, {"c"}, "makes_c");
  auto graph = Parse(m);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  std::vector<Node*> nodes = (*graph)->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]->name(), "makes_c");
  EXPECT_EQ(nodes[1]->name(), "if");
}

TEST(OnnxLoadSubgraphTest, UndefinedOuterNameIsAnError) {
  onnx::ModelProto m = MakeIfModel();
  m.mutable_graph()->mutable_input()->DeleteSubrange(3, 1);  // drop "c"
  auto g = Parse(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("'c'"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("'if'"), std::string::npos) << g.status().message();
}

TEST(OnnxLoadSubgraphTest, GraphsAttributeRoundTripsThroughSave) {
  onnx::ModelProto m = MakeIfModel();
  onnx::AttributeProto* graphs = m.mutable_graph()->mutable_node(0)->add_attribute();
  graphs->set_name("extra_bodies");
  graphs->set_type(onnx::AttributeProto::GRAPHS);
  *graphs->add_graphs() = m.graph().node(0).attribute(1).g();
  *graphs->add_graphs() = m.graph().node(0).attribute(0).g();
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto bytes = SerializeModel(**g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto again = ParseModel(*bytes, "again.onnx", {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  testing::ExpectSameGraph(**g, **again);
  EXPECT_EQ((*again)->FindNode("if")->attributes()[2].graphs.size(), 2u);
}

TEST(OnnxLoadSubgraphTest, SaveRefusesASubgraphWhoseOuterValueWasRenamed) {
  auto g = Parse(MakeIfModel());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE((*g)->RenameValue((*g)->FindValue("b"), "renamed_b").ok());
  auto bytes = SerializeModel(**g);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(bytes.status().message().find("'b'"), std::string::npos) << bytes.status().message();
}

}  // namespace
}  // namespace qtune::ir
