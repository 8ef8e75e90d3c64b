// SaveModel/SerializeModel: what is written, and load -> save -> load round trips.
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"

namespace qtune::ir {
namespace {
namespace fs = std::filesystem;

using testing::ExpectSameGraph;
using testing::TempDir;

std::unique_ptr<Graph> Reparse(const Graph& graph) {
  auto bytes = SerializeModel(graph);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  if (!bytes.ok()) return nullptr;
  auto again = ParseModel(*bytes, "reparsed.onnx", {});
  EXPECT_TRUE(again.ok()) << again.status().ToString();
  return again.ok() ? std::move(again).value() : nullptr;
}

onnx::ModelProto ToProto(const Graph& graph) {
  onnx::ModelProto m;
  auto bytes = SerializeModel(graph);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  if (bytes.ok()) EXPECT_TRUE(m.ParseFromString(*bytes));
  return m;
}

std::string SubgraphBytes() {
  onnx::GraphProto g;
  g.set_name("body");
  testing::AddNode(&g, "Identity", {"x"}, {"out"});
  testing::AddOutput(&g, "out", {4});
  return g.SerializeAsString();
}

TEST(OnnxSaveTest, AttributesOfEveryTypeRoundTrip) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {4});
  Attribute graph_attr;
  graph_attr.name = "g";
  graph_attr.type = AttributeType::kGraph;
  graph_attr.graphs = {SubgraphBytes()};
  Attribute graphs_attr = graph_attr;
  graphs_attr.name = "gs";
  graphs_attr.type = AttributeType::kGraphs;
  graphs_attr.graphs = {SubgraphBytes(), SubgraphBytes()};
  Attribute tensors_attr;
  tensors_attr.name = "ts";
  tensors_attr.type = AttributeType::kTensors;
  tensors_attr.tensors = {Tensor::FromVector<int8_t>({2}, {-1, 1}), Tensor::Scalar<double>(0.5)};
  Value* y = b.Op("Custom", {x},
                  {Attribute::Float("f", -0.125f), Attribute::Int("i", int64_t{1} << 50),
                   Attribute::String("s", std::string("bytes\0with nul", 14)),
                   Attribute::TensorValue("t", Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4})),
                   Attribute::Floats("fs", {1.5f, -2.5f}), Attribute::Ints("is", {-1, 0, 7}),
                   Attribute::Strings("ss", {"a", "", "c"}), tensors_attr, graph_attr, graphs_attr},
                  {.name = "custom", .domain = "com.example"});
  b.ImportOpset("com.example", 3);
  b.Output(y);
  auto graph = b.Build();
  // The subgraphs read the outer "x": the builder does not know, so record it.
  graph->SetImplicitInputs(graph->FindNode("custom"), {x});
  auto again = Reparse(*graph);
  ASSERT_NE(again, nullptr);
  ExpectSameGraph(*graph, *again);
  EXPECT_EQ(again->FindNode("custom")->domain(), "com.example");
  EXPECT_EQ(again->info().opset_imports.at("com.example"), 3);
}

TEST(OnnxSaveTest, InitializersOfEveryStorableTypeRoundTrip) {
  GraphBuilder b(21);
  for (int32_t type = 1; type <= kMaxKnownDataType; ++type) {
    const DataType dtype = static_cast<DataType>(type);
    // Packed 4-bit types hold only nibbles: onnx_packed_types_test covers them.
    if (!IsStorableDataType(dtype) || IsPackedInFiles(dtype)) continue;
    auto t = Tensor::Allocate(dtype, {3, 2});
    ASSERT_TRUE(t.ok());
    auto* bytes = static_cast<uint8_t*>(t->raw_data());
    for (size_t i = 0; i < t->byte_size(); ++i) bytes[i] = static_cast<uint8_t>(i * 31 + type);
    if (dtype == DataType::kBool) {
      for (size_t i = 0; i < t->byte_size(); ++i) bytes[i] &= 1;
    }
    b.Output(b.Initializer(std::string(DataTypeName(dtype)), *t));
  }
  auto graph = b.Build();
  auto again = Reparse(*graph);
  ASSERT_NE(again, nullptr);
  ExpectSameGraph(*graph, *again);
}

TEST(OnnxSaveTest, TypedIntermediatesGetValueInfo) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, Shape({Dim::Symbolic("N"), Dim::Known(8)}));
  Value* typed = b.Op("Relu", {x});
  b.SetType(typed, DataType::kFloat32, Shape({Dim::Symbolic("N"), Dim::Unknown()}));
  Value* untyped = b.Op("Neg", {typed});
  b.Output(b.Op("Abs", {untyped}));
  auto graph = b.Build();
  onnx::ModelProto m = ToProto(*graph);
  ASSERT_EQ(m.graph().value_info_size(), 1);
  EXPECT_EQ(m.graph().value_info(0).name(), typed->name());
  const auto& shape = m.graph().value_info(0).type().tensor_type().shape();
  EXPECT_EQ(shape.dim(0).dim_param(), "N");
  EXPECT_FALSE(shape.dim(1).has_dim_value());
  EXPECT_FALSE(shape.dim(1).has_dim_param());
  auto again = Reparse(*graph);
  ASSERT_NE(again, nullptr);
  ExpectSameGraph(*graph, *again);
}

TEST(OnnxSaveTest, OmittedOptionalInputsAndOutputsStayOmitted) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {4});
  Value* max = b.Initializer("max", Tensor::Scalar<float>(6));
  Value* clipped = b.Op("Clip", {x, nullptr, max});
  std::vector<Value*> outs =
      b.MultiOp("Dropout", {clipped}, 2, {}, {.output_names = {"dropped", ""}});
  b.Output(outs[0]);
  auto graph = b.Build();
  onnx::ModelProto m = ToProto(*graph);
  EXPECT_EQ(m.graph().node(0).input(1), "");
  EXPECT_EQ(m.graph().node(1).output_size(), 2);
  EXPECT_EQ(m.graph().node(1).output(1), "");
  auto again = Reparse(*graph);
  ASSERT_NE(again, nullptr);
  ExpectSameGraph(*graph, *again);
}

TEST(OnnxSaveTest, NodesAreWrittenInTopologicalOrder) {
  Graph g;
  g.info().opset_imports[""] = 17;
  Value* x = *g.AddInput("x", {DataType::kFloat32, Shape::FromSizes({1})});
  Node* second =
      *g.AddNode({.op_type = "Neg", .name = "second", .inputs = {nullptr}, .output_names = {"b"}});
  Node* first =
      *g.AddNode({.op_type = "Relu", .name = "first", .inputs = {x}, .output_names = {"a"}});
  g.SetNodeInput(second, 0, first->output(0));
  ASSERT_TRUE(g.AddOutput(second->output(0)).ok());
  onnx::ModelProto m = ToProto(g);
  ASSERT_EQ(m.graph().node_size(), 2);
  EXPECT_EQ(m.graph().node(0).name(), "first");
  EXPECT_EQ(m.graph().node(1).name(), "second");
}

TEST(OnnxSaveTest, CyclicGraphIsRefused) {
  Graph g;
  Node* a =
      *g.AddNode({.op_type = "Relu", .name = "a", .inputs = {nullptr}, .output_names = {"a_out"}});
  g.SetNodeInput(a, 0, a->output(0));
  ASSERT_TRUE(g.AddOutput(a->output(0)).ok());
  auto bytes = SerializeModel(g);
  EXPECT_EQ(bytes.status().code(), StatusCode::kFailedPrecondition);
}

TEST(OnnxSaveTest, SaveWritesAtomicallyAndLeavesNoTemporaryFiles) {
  GraphBuilder b(17);
  b.Output(b.Op("Relu", {b.Input("x", DataType::kFloat32, {1})}));
  auto graph = b.Build();
  TempDir dir;
  ASSERT_TRUE(SaveModel(*graph, dir.File("m.onnx")).ok());
  ASSERT_TRUE(SaveModel(*graph, dir.File("m.onnx")).ok());  // overwrite
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "m.onnx");
  }
  EXPECT_EQ(files, 1);
  EXPECT_FALSE(fs::exists(dir.File("m.onnx.data")));
}

TEST(OnnxSaveTest, SaveIntoAMissingFolderFails) {
  GraphBuilder b(17);
  b.Output(b.Op("Relu", {b.Input("x", DataType::kFloat32, {1})}));
  auto graph = b.Build();
  TempDir dir;
  Status s = SaveModel(*graph, dir.File("no/such/folder/m.onnx"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("m.onnx"), std::string::npos) << s.ToString();
}

TEST(OnnxSaveTest, ModelInfoRoundTrips) {
  GraphBuilder b(11);
  b.Output(b.Op("Relu", {b.Input("x", DataType::kFloat32, {1})}));
  auto graph = b.Build();
  ModelInfo& info = graph->info();
  info.producer_name = "exporter";
  info.producer_version = "9.9";
  info.domain = "org.example";
  info.model_version = 3;
  info.doc_string = "docs";
  info.graph_name = "g";
  info.metadata_props = {{"k1", "v1"}, {"k2", "v2"}};
  auto again = Reparse(*graph);
  ASSERT_NE(again, nullptr);
  ExpectSameGraph(*graph, *again);
  EXPECT_EQ(again->info().domain, "org.example");
  EXPECT_EQ(again->info().model_version, 3);
  EXPECT_EQ(again->info().graph_name, "g");
  EXPECT_EQ(again->info().ir_version, 6);
}

}  // namespace
}  // namespace qtune::ir
