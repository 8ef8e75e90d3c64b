// ParseModel/LoadModel on hand-made ModelProtos: every feature the loader accepts.
#include <gtest/gtest.h>

#include <cstring>

#include "ir/constant.h"
#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"

namespace qtune::ir {
namespace {

using testing::AddInitializer;
using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using testing::MakeModel;
using testing::Parse;

std::vector<std::string> NodeNames(const Graph& g) {
  std::vector<std::string> names;
  for (Node* n : g.nodes()) names.push_back(n->name());
  return names;
}

TEST(OnnxLoadTest, ReluModelLoads) {
  auto g = Parse(testing::MakeReluModel());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->onnx_opset(), 17);
  EXPECT_EQ((*g)->info().graph_name, "test");
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->type().shape->ToString(), "[1,4]");
  ASSERT_EQ((*g)->outputs().size(), 1u);
  EXPECT_EQ((*g)->outputs()[0]->producer()->op_type(), "Relu");
  EXPECT_EQ((*g)->outputs()[0]->type().shape->ToString(), "[1,4]");
}

TEST(OnnxLoadTest, UnnamedNodesGetOpTypeAndIndexNames) {
  onnx::ModelProto m = MakeModel();
  AddInput(m.mutable_graph(), "x", {1});
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"a"});
  AddNode(m.mutable_graph(), "Neg", {"a"}, {"b"});
  AddOutput(m.mutable_graph(), "b");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(NodeNames(**g), (std::vector<std::string>{"Relu_0", "Neg_1"}));
}

TEST(OnnxLoadTest, DuplicateNodeNamesGetSuffixesThatAvoidExistingNames) {
  onnx::ModelProto m = MakeModel();
  AddInput(m.mutable_graph(), "x", {1});
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"a"}, "n");
  AddNode(m.mutable_graph(), "Relu", {"a"}, {"b"}, "n");
  AddNode(m.mutable_graph(), "Relu", {"b"}, {"c"}, "n_1");
  AddNode(m.mutable_graph(), "Relu", {"c"}, {"d"});  // would be Relu_3
  AddNode(m.mutable_graph(), "Relu", {"d"}, {"e"}, "Relu_3");
  AddOutput(m.mutable_graph(), "e");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(NodeNames(**g), (std::vector<std::string>{"n", "n_2", "n_1", "Relu_3_1", "Relu_3"}));
}

TEST(OnnxLoadTest, NodesOutOfOrderAreSortedTopologically) {
  onnx::ModelProto m = MakeModel();
  AddInput(m.mutable_graph(), "x", {1});
  AddNode(m.mutable_graph(), "Neg", {"a"}, {"b"}, "second");
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"a"}, "first");
  AddOutput(m.mutable_graph(), "b");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(NodeNames(**g), (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ((*g)->FindNode("second")->input(0)->producer(), (*g)->FindNode("first"));
}

TEST(OnnxLoadTest, InitializerAlsoListedAsInputBecomesInitializer) {
  onnx::ModelProto m = MakeModel(9);
  m.set_ir_version(3);
  AddInput(m.mutable_graph(), "x", {2});
  AddInput(m.mutable_graph(), "w", {2});
  AddInitializer(m.mutable_graph(), "w", {2}, {1.5f, -2});
  AddNode(m.mutable_graph(), "Mul", {"x", "w"}, {"y"});
  AddOutput(m.mutable_graph(), "y");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->name(), "x");
  Value* w = (*g)->FindValue("w");
  ASSERT_TRUE(w->is_initializer());
  EXPECT_FALSE(w->is_graph_input());
  EXPECT_EQ(w->initializer().span<float>()[1], -2.0f);
}

TEST(OnnxLoadTest, OmittedOptionalInputsAreNull) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m.mutable_graph(), "x", {4});
  AddInitializer(m.mutable_graph(), "max", {}, {6});
  AddNode(m.mutable_graph(), "Clip", {"x", "", "max"}, {"y"});
  AddOutput(m.mutable_graph(), "y");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Node* clip = (*g)->nodes()[0];
  ASSERT_EQ(clip->num_inputs(), 3u);
  EXPECT_EQ(clip->input(1), nullptr);
  EXPECT_EQ(clip->input(2)->name(), "max");
}

TEST(OnnxLoadTest, SymbolicAndUnknownDimsAreKept) {
  onnx::ModelProto m = MakeModel();
  onnx::ValueInfoProto* in = m.mutable_graph()->add_input();
  in->set_name("x");
  auto* t = in->mutable_type()->mutable_tensor_type();
  t->set_elem_type(1);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim();  // unknown
  t->mutable_shape()->add_dim()->set_dim_value(3);
  onnx::ValueInfoProto* rankless = m.mutable_graph()->add_input();
  rankless->set_name("r");
  rankless->mutable_type()->mutable_tensor_type()->set_elem_type(7);
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"y"});
  AddOutput(m.mutable_graph(), "y");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Shape& shape = *(*g)->inputs()[0]->type().shape;
  EXPECT_EQ(shape.dim(0), Dim::Symbolic("batch"));
  EXPECT_EQ(shape.dim(1), Dim::Unknown());
  EXPECT_EQ(shape.dim(2), Dim::Known(3));
  EXPECT_EQ((*g)->inputs()[1]->dtype(), DataType::kInt64);
  EXPECT_FALSE((*g)->inputs()[1]->type().shape.has_value());
}

TEST(OnnxLoadTest, ValueInfoTypesIntermediateValues) {
  onnx::ModelProto m = testing::MakeReluModel();
  AddNode(m.mutable_graph(), "Neg", {"y"}, {"z"});
  m.mutable_graph()->mutable_output(0)->set_name("z");
  onnx::ValueInfoProto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("y");
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(1);
  t->mutable_shape()->add_dim()->set_dim_param("n");
  onnx::ValueInfoProto* dangling = m.mutable_graph()->add_value_info();
  dangling->set_name("not_in_graph");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Value* y = (*g)->FindValue("y");
  EXPECT_EQ(y->dtype(), DataType::kFloat32);
  EXPECT_EQ(y->type().shape->ToString(), "[n]");
}

TEST(OnnxLoadTest, ModelInfoIsCarried) {
  onnx::ModelProto m = testing::MakeReluModel();
  m.set_producer_name("pytorch");
  m.set_producer_version("2.1");
  m.set_domain("ai.example");
  m.set_model_version(7);
  m.set_doc_string("a model");
  auto* op = m.add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
  auto* meta = m.add_metadata_props();
  meta->set_key("author");
  meta->set_value("me");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const ModelInfo& info = (*g)->info();
  EXPECT_EQ(info.ir_version, 8);
  EXPECT_EQ(info.producer_name, "pytorch");
  EXPECT_EQ(info.producer_version, "2.1");
  EXPECT_EQ(info.domain, "ai.example");
  EXPECT_EQ(info.model_version, 7);
  EXPECT_EQ(info.doc_string, "a model");
  EXPECT_EQ(info.opset_imports.at("com.microsoft"), 1);
  ASSERT_EQ(info.metadata_props.size(), 1u);
  EXPECT_EQ(info.metadata_props[0], std::make_pair(std::string("author"), std::string("me")));
}

TEST(OnnxLoadTest, GraphOutputMayBeAGraphInputOrInitializer) {
  onnx::ModelProto m = MakeModel();
  AddInput(m.mutable_graph(), "x", {1});
  AddInitializer(m.mutable_graph(), "c", {1}, {3});
  AddOutput(m.mutable_graph(), "x");
  AddOutput(m.mutable_graph(), "c");
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->outputs().size(), 2u);
  EXPECT_EQ((*g)->num_nodes(), 0u);
}

TEST(OnnxLoadTest, AttributeWithoutTypeIsInferred) {
  onnx::ModelProto m = testing::MakeReluModel();
  onnx::AttributeProto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("alpha");
  a->set_f(0.5f);
  onnx::AttributeProto* b = m.mutable_graph()->mutable_node(0)->add_attribute();
  b->set_name("axes");
  b->add_ints(1);
  b->add_ints(2);
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Node* n = (*g)->nodes()[0];
  EXPECT_EQ(n->GetFloat("alpha", 0), 0.5f);
  EXPECT_EQ(n->GetInts("axes", {}), (std::vector<int64_t>{1, 2}));
}

TEST(OnnxLoadTest, AiOnnxDomainCountsAsDefaultOpset) {
  onnx::ModelProto m = testing::MakeReluModel();
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  m.mutable_opset_import(0)->set_version(12);
  auto g = Parse(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->onnx_opset(), 12);
}

TEST(OnnxLoadTest, ConstantNodesAreKeptInAllTheirForms) {
  onnx::ModelProto m = MakeModel(13);
  onnx::GraphProto* g = m.mutable_graph();
  onnx::NodeProto* c1 = AddNode(g, "Constant", {}, {"c1"}, "tensor_form");
  onnx::AttributeProto* value = c1->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(7);
  value->mutable_t()->add_dims(2);
  value->mutable_t()->add_int64_data(4);
  value->mutable_t()->add_int64_data(-5);
  onnx::NodeProto* c2 = AddNode(g, "Constant", {}, {"c2"}, "float_form");
  c2->add_attribute()->set_name("value_float");
  c2->mutable_attribute(0)->set_type(onnx::AttributeProto::FLOAT);
  c2->mutable_attribute(0)->set_f(2.5f);
  onnx::NodeProto* c3 = AddNode(g, "Constant", {}, {"c3"}, "ints_form");
  c3->add_attribute()->set_name("value_ints");
  c3->mutable_attribute(0)->set_type(onnx::AttributeProto::INTS);
  c3->mutable_attribute(0)->add_ints(7);
  c3->mutable_attribute(0)->add_ints(8);
  c3->mutable_attribute(0)->add_ints(9);
  AddOutput(g, "c1");
  AddOutput(g, "c2");
  AddOutput(g, "c3");
  auto graph = Parse(m);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ((*graph)->num_nodes(), 3u);
  auto t1 = ConstantValue(*(*graph)->FindNode("tensor_form"));
  ASSERT_TRUE(t1.ok()) << t1.status().ToString();
  EXPECT_EQ(t1->span<int64_t>()[1], -5);
  auto t2 = ConstantValue(*(*graph)->FindNode("float_form"));
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(t2->rank(), 0u);
  EXPECT_EQ(t2->span<float>()[0], 2.5f);
  auto t3 = ConstantValue(*(*graph)->FindNode("ints_form"));
  ASSERT_TRUE(t3.ok());
  EXPECT_EQ(t3->sizes(), (std::vector<int64_t>{3}));
  EXPECT_EQ(t3->span<int64_t>()[2], 9);
}

}  // namespace
}  // namespace qtune::ir
