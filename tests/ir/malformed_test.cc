// Hand-made malformed models: each must return a clean Status that names the file and
// the offending node or tensor, never crash and never allocate what the file declares.
#include <gtest/gtest.h>

#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"

namespace qtune::ir {
namespace {

using testing::AddInitializer;
using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using testing::MakeModel;
using testing::MakeReluModel;
using testing::Parse;

// Expects a failure with `code` whose message names the file and contains `needle`.
void ExpectError(const onnx::ModelProto& model, StatusCode code, const std::string& needle) {
  auto g = Parse(model);
  ASSERT_FALSE(g.ok()) << "expected an error mentioning " << needle;
  EXPECT_EQ(g.status().code(), code) << g.status().ToString();
  EXPECT_EQ(g.status().message().rfind("test.onnx", 0), 0u) << g.status().message();
  EXPECT_NE(g.status().message().find(needle), std::string::npos) << g.status().message();
}

onnx::ModelProto WithInitializer(const onnx::TensorProto& tensor) {
  onnx::ModelProto m = MakeModel();
  *m.mutable_graph()->add_initializer() = tensor;
  AddOutput(m.mutable_graph(), tensor.name());
  return m;
}

onnx::TensorProto Tensor(const std::string& name, int32_t type, std::vector<int64_t> dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

TEST(MalformedTest, MissingGraph) {
  onnx::ModelProto m = MakeModel();
  m.clear_graph();
  ExpectError(m, StatusCode::kInvalidArgument, "no graph");
}

TEST(MalformedTest, CycleNamesANodeOnIt) {
  onnx::ModelProto m = MakeModel();
  AddInput(m.mutable_graph(), "x", {1});
  AddNode(m.mutable_graph(), "Add", {"x", "b"}, {"a"}, "first");
  AddNode(m.mutable_graph(), "Relu", {"a"}, {"b"}, "second");
  AddOutput(m.mutable_graph(), "b");
  ExpectError(m, StatusCode::kInvalidArgument, "cycle");
}

TEST(MalformedTest, SelfLoop) {
  onnx::ModelProto m = MakeModel();
  AddNode(m.mutable_graph(), "Relu", {"a"}, {"a"}, "loop");
  AddOutput(m.mutable_graph(), "a");
  ExpectError(m, StatusCode::kInvalidArgument, "'loop'");
}

TEST(MalformedTest, InputWithoutProducer) {
  onnx::ModelProto m = MakeReluModel();
  m.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
  ExpectError(m, StatusCode::kInvalidArgument, "'ghost'");
}

// Domain "qtune" holds the engine's fused ops; only its compiler may create them.
TEST(MalformedTest, InternalQtuneDomainOpIsRefusedNamingTheNode) {
  onnx::ModelProto m = MakeReluModel();
  auto* opset = m.add_opset_import();
  opset->set_domain("qtune");
  opset->set_version(1);
  onnx::NodeProto* n = AddNode(m.mutable_graph(), "QConv", {"x"}, {"z"}, "smuggled");
  n->set_domain("qtune");
  AddOutput(m.mutable_graph(), "z");
  ExpectError(m, StatusCode::kInvalidArgument, "'smuggled'");
  ExpectError(m, StatusCode::kInvalidArgument, "domain 'qtune'");
}

TEST(MalformedTest, InternalQtuneDomainOpInASubgraphIsRefused) {
  onnx::ModelProto m = MakeModel();
  AddInput(m.mutable_graph(), "cond", {}, /*elem_type=*/9);
  AddInput(m.mutable_graph(), "x", {1});
  onnx::NodeProto* branch_if = AddNode(m.mutable_graph(), "If", {"cond"}, {"y"}, "branch");
  for (const char* which : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* a = branch_if->add_attribute();
    a->set_name(which);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* body = a->mutable_g();
    body->set_name(which);
    onnx::NodeProto* inner = AddNode(body, "FusedMatMul", {"x"}, {"inner_y"}, "hidden");
    inner->set_domain("qtune");
    AddOutput(body, "inner_y");
  }
  AddOutput(m.mutable_graph(), "y");
  ExpectError(m, StatusCode::kInvalidArgument, "'hidden'");
  ExpectError(m, StatusCode::kInvalidArgument, "'branch'");
}

TEST(MalformedTest, TwoNodesWriteTheSameOutput) {
  onnx::ModelProto m = MakeReluModel();
  AddNode(m.mutable_graph(), "Neg", {"x"}, {"y"}, "neg");
  ExpectError(m, StatusCode::kInvalidArgument, "duplicate output name");
}

TEST(MalformedTest, NodeOverwritesAGraphInput) {
  onnx::ModelProto m = MakeReluModel();
  AddNode(m.mutable_graph(), "Neg", {"y"}, {"x"}, "neg");
  ExpectError(m, StatusCode::kInvalidArgument, "'x'");
}

TEST(MalformedTest, NodeListsTheSameOutputTwice) {
  onnx::ModelProto m = MakeReluModel();
  AddNode(m.mutable_graph(), "Split", {"x"}, {"s", "s"}, "split");
  ExpectError(m, StatusCode::kInvalidArgument, "'s'");
}

TEST(MalformedTest, GraphOutputListedTwice) {
  onnx::ModelProto m = MakeReluModel();
  AddOutput(m.mutable_graph(), "y");
  ExpectError(m, StatusCode::kInvalidArgument, "listed twice");
}

TEST(MalformedTest, GraphOutputNotProduced) {
  onnx::ModelProto m = MakeReluModel();
  AddOutput(m.mutable_graph(), "nowhere");
  ExpectError(m, StatusCode::kInvalidArgument, "'nowhere'");
}

TEST(MalformedTest, DuplicateGraphInput) {
  onnx::ModelProto m = MakeReluModel();
  AddInput(m.mutable_graph(), "x", {1});
  ExpectError(m, StatusCode::kInvalidArgument, "'x'");
}

TEST(MalformedTest, DuplicateInitializer) {
  onnx::ModelProto m = MakeReluModel();
  AddInitializer(m.mutable_graph(), "w", {1}, {1});
  AddInitializer(m.mutable_graph(), "w", {1}, {2});
  ExpectError(m, StatusCode::kInvalidArgument, "'w'");
}

TEST(MalformedTest, UnknownInitializerDataType) {
  onnx::TensorProto t = Tensor("w", 99, {1});
  t.set_raw_data("abcd");
  ExpectError(WithInitializer(t), StatusCode::kInvalidArgument, "unknown data type 99");
}

TEST(MalformedTest, UndefinedInitializerDataType) {
  onnx::TensorProto t = Tensor("w", 0, {1});
  ExpectError(WithInitializer(t), StatusCode::kInvalidArgument, "'w'");
}

TEST(MalformedTest, UnknownInputElementType) {
  onnx::ModelProto m = MakeReluModel();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      kMaxKnownDataType + 1);
  ExpectError(m, StatusCode::kInvalidArgument, "graph input 'x'");
}

TEST(MalformedTest, InputWithoutType) {
  onnx::ModelProto m = MakeReluModel();
  m.mutable_graph()->mutable_input(0)->clear_type();
  ExpectError(m, StatusCode::kInvalidArgument, "graph input 'x'");
}

TEST(MalformedTest, NegativeInitializerDim) {
  onnx::TensorProto t = Tensor("w", 1, {2, -3});
  ExpectError(WithInitializer(t), StatusCode::kInvalidArgument, "negative dimension");
}

TEST(MalformedTest, NegativeInputDim) {
  onnx::ModelProto m = MakeReluModel();
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(-1);
  ExpectError(m, StatusCode::kInvalidArgument, "negative dimension");
}

TEST(MalformedTest, DimsWhoseProductOverflows) {
  onnx::TensorProto t = Tensor("huge", 1, {int64_t{1} << 40, int64_t{1} << 40});
  ExpectError(WithInitializer(t), StatusCode::kInvalidArgument, "overflows");
}

TEST(MalformedTest, HugeDeclaredDimsAreRefusedBeforeAllocating) {
  // 4 TiB declared, a few bytes present: refused by the byte budget, not by an allocation.
  onnx::TensorProto t = Tensor("huge", 1, {int64_t{1} << 20, int64_t{1} << 20});
  t.set_raw_data("abcd");
  ExpectError(WithInitializer(t), StatusCode::kResourceExhausted, "'huge'");
}

TEST(MalformedTest, TensorsTogetherAboveTheBudget) {
  onnx::ModelProto m = MakeModel();
  AddInitializer(m.mutable_graph(), "a", {64}, std::vector<float>(64, 1));
  AddInitializer(m.mutable_graph(), "b", {64}, std::vector<float>(64, 1));
  AddOutput(m.mutable_graph(), "a");
  LoadOptions options;
  options.max_total_tensor_bytes = 300;  // a fits (256 bytes), a + b do not
  auto g = Parse(m, options);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(g.status().message().find("'b'"), std::string::npos) << g.status().message();
}

TEST(MalformedTest, RawDataSizeDoesNotMatchDims) {
  onnx::TensorProto t = Tensor("w", 1, {2, 3});
  t.set_raw_data(std::string(20, '\0'));
  ExpectError(WithInitializer(t), StatusCode::kInvalidArgument, "20 bytes of raw_data");
}

TEST(MalformedTest, TypedDataCountDoesNotMatchDims) {
  onnx::TensorProto t = Tensor("w", 7, {3});
  t.add_int64_data(1);
  t.add_int64_data(2);
  ExpectError(WithInitializer(t), StatusCode::kInvalidArgument, "2 values in int64_data");
}

TEST(MalformedTest, TensorWithoutData) {
  onnx::TensorProto t = Tensor("w", 1, {4});
  ExpectError(WithInitializer(t), StatusCode::kInvalidArgument, "no data");
}

TEST(MalformedTest, DataInTheWrongTypedField) {
  onnx::TensorProto t = Tensor("w", 1, {1});
  t.add_int64_data(1);
  ExpectError(WithInitializer(t), StatusCode::kInvalidArgument, "'w'");
}

TEST(MalformedTest, StringTensorsAreUnimplemented) {
  onnx::TensorProto t = Tensor("names", 8, {1});
  t.add_string_data("hello");
  ExpectError(WithInitializer(t), StatusCode::kUnimplemented, "'names'");
}

TEST(MalformedTest, ConstantWithBadTensorNamesTheNode) {
  onnx::ModelProto m = MakeModel();
  onnx::NodeProto* c = AddNode(m.mutable_graph(), "Constant", {}, {"c"}, "const0");
  onnx::AttributeProto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = Tensor("", 1, {1000});
  a->mutable_t()->set_raw_data("xy");
  AddOutput(m.mutable_graph(), "c");
  ExpectError(m, StatusCode::kInvalidArgument, "node 'const0' (Constant), attribute 'value'");
}

TEST(MalformedTest, NodeWithoutOpType) {
  onnx::ModelProto m = MakeReluModel();
  m.mutable_graph()->mutable_node(0)->clear_op_type();
  ExpectError(m, StatusCode::kInvalidArgument, "no op_type");
}

TEST(MalformedTest, DuplicateAttribute) {
  onnx::ModelProto m = MakeReluModel();
  for (int i = 0; i < 2; ++i) {
    onnx::AttributeProto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(1);
  }
  ExpectError(m, StatusCode::kInvalidArgument, "'alpha' twice");
}

TEST(MalformedTest, AttributeWithoutValue) {
  onnx::ModelProto m = MakeReluModel();
  m.mutable_graph()->mutable_node(0)->add_attribute()->set_name("empty");
  ExpectError(m, StatusCode::kInvalidArgument, "'empty'");
}

TEST(MalformedTest, SparseTensorAttributeIsUnimplemented) {
  onnx::ModelProto m = MakeReluModel();
  onnx::AttributeProto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  ExpectError(m, StatusCode::kUnimplemented, "'sparse_value'");
}

// Sequences of tensors and optionals load (they run as the engine's dynamic steps); maps
// and sequences of sequences do not.
TEST(MalformedTest, MapTypedInputAndNestedSequenceAreUnimplemented) {
  onnx::ModelProto m = MakeReluModel();
  onnx::ValueInfoProto* in = m.mutable_graph()->add_input();
  in->set_name("map");
  onnx::TypeProto::Map* map = in->mutable_type()->mutable_map_type();
  map->set_key_type(7);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  ExpectError(m, StatusCode::kUnimplemented, "'map'");

  onnx::ModelProto nested = MakeReluModel();
  onnx::ValueInfoProto* seq = nested.mutable_graph()->add_input();
  seq->set_name("seqs");
  seq->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(1);
  ExpectError(nested, StatusCode::kUnimplemented, "'seqs'");
}

TEST(MalformedTest, LocalFunctionsAreUnimplemented) {
  onnx::ModelProto m = MakeReluModel();
  m.add_functions()->set_name("MyFunc");
  ExpectError(m, StatusCode::kUnimplemented, "MyFunc");
}

TEST(MalformedTest, ConflictingOpsetImports) {
  onnx::ModelProto m = MakeReluModel();
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(9);
  ExpectError(m, StatusCode::kInvalidArgument, "imported twice");
}

TEST(MalformedTest, ExternalDataWithoutAFolderIsRefused) {
  onnx::TensorProto t = Tensor("w", 1, {1});
  t.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* e = t.add_external_data();
  e->set_key("location");
  e->set_value("w.bin");
  ExpectError(WithInitializer(t), StatusCode::kFailedPrecondition, "'w'");
}

TEST(MalformedTest, SparseInitializerIsUnimplemented) {
  onnx::ModelProto m = MakeReluModel();
  m.mutable_graph()->add_sparse_initializer()->mutable_values()->set_name("sp");
  ExpectError(m, StatusCode::kUnimplemented, "'sp'");
}

}  // namespace
}  // namespace qtune::ir
