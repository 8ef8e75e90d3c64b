// RunReference: whole graphs through the reference kernels, including the int64 shape
// subgraphs exporters emit (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), input
// validation, keep_all_values, and the registry/EvaluateNode contract.
#include "runtime/reference/reference_executor.h"

#include <algorithm>

#include "core/npy.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "reference_test_util.h"

namespace qtune::runtime::testing {
namespace {

using ir::GraphBuilder;
using ir::Value;
using Sizes = std::vector<int64_t>;

const Tensor* Find(const NamedTensors& values, const std::string& name) {
  for (const auto& [n, t] : values) {
    if (n == name) return &t;
  }
  return nullptr;
}

// y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) * 2 for x of [batch, 3, 4].
std::unique_ptr<ir::Graph> FlattenKeepingBatch(int64_t opset) {
  GraphBuilder b(opset);
  Value* x = b.Input("x", DataType::kFloat32,
                     Shape({Dim::Symbolic("batch"), Dim::Known(3), Dim::Known(4)}));
  Value* shape = b.Op("Shape", {x});
  Value* batch =
      b.Op("Gather", {shape, b.Constant(Tensor::Scalar<int64_t>(0))}, {Attribute::Int("axis", 0)});
  Value* batch1 = opset >= 13 ? b.Op("Unsqueeze", {batch, b.Constant(Ints({0}))})
                              : b.Op("Unsqueeze", {batch}, {Attribute::Ints("axes", {0})});
  Value* target = b.Op("Concat", {batch1, b.Initializer("minus_one", Ints({-1}))},
                       {Attribute::Int("axis", 0)}, {.name = "concat"});
  Value* flat = b.Op("Reshape", {x, target}, {}, {.name = "reshape", .output_names = {"flat"}});
  Value* y = b.Op("Mul", {flat, b.Initializer("two", Tensor::Scalar<float>(2))}, {},
                  {.output_names = {"y"}});
  b.Output(y);
  return b.Build();
}

TEST(ReferenceExecutorTest, RunsInt64ShapeSubgraphChainAtOpset11And13) {
  for (int64_t opset : {11, 13, 17}) {
    auto graph = FlattenKeepingBatch(opset);
    for (int64_t batch : {1, 2, 5}) {
      auto out = RunReference(*graph, {{"x", Iota({batch, 3, 4})}});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      ASSERT_EQ(out->size(), 1u);
      EXPECT_EQ((*out)[0].first, "y");
      const Tensor& y = (*out)[0].second;
      ASSERT_EQ(y.sizes(), (Sizes{batch, 12}));
      EXPECT_EQ(y.data<float>()[12 * batch - 1], 2.0f * static_cast<float>(12 * batch - 1));
    }
  }
}

TEST(ReferenceExecutorTest, KeepAllValuesReturnsIntermediatesAfterTheOutputs) {
  auto graph = FlattenKeepingBatch(13);
  auto out = RunReference(*graph, {{"x", Iota({2, 3, 4})}}, {.keep_all_values = true});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].first, "y");
  const Tensor* target = Find(*out, "concat_out");
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(Values<int64_t>(*target), (Sizes{2, -1}));
  const Tensor* flat = Find(*out, "flat");
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(flat->sizes(), (Sizes{2, 12}));
  // Every node output appears exactly once.
  EXPECT_EQ(out->size(), graph->num_nodes());
}

TEST(ReferenceExecutorTest, InputsAreCheckedByNameTypeRankAndKnownDims) {
  auto graph = FlattenKeepingBatch(13);
  auto missing = RunReference(*graph, {});
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("'x'"), std::string::npos);

  auto unknown = RunReference(*graph, {{"x", Iota({1, 3, 4})}, {"z", Iota({1})}});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'z'"), std::string::npos);

  auto wrong_type = RunReference(*graph, {{"x", I64({1, 3, 4}, std::vector<int64_t>(12, 0))}});
  EXPECT_EQ(wrong_type.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_type.status().message().find("float32"), std::string::npos);

  auto wrong_rank = RunReference(*graph, {{"x", Iota({12})}});
  EXPECT_EQ(wrong_rank.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_rank.status().message().find("rank"), std::string::npos);

  auto wrong_dim = RunReference(*graph, {{"x", Iota({1, 4, 3})}});
  EXPECT_EQ(wrong_dim.status().code(), StatusCode::kInvalidArgument);

  auto twice = RunReference(*graph, {{"x", Iota({1, 3, 4})}, {"x", Iota({1, 3, 4})}});
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceExecutorTest, NodeErrorsPropagateWithTheNodeName) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, Shape({Dim::Unknown()}));
  Value* y = b.Op("Reshape", {x, b.Initializer("shape", Ints({4}))}, {}, {.name = "bad_reshape"});
  b.Output(y);
  auto graph = b.Build();
  EXPECT_TRUE(RunReference(*graph, {{"x", Iota({4})}}).ok());
  auto bad = RunReference(*graph, {{"x", Iota({5})}});
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Reshape 'bad_reshape'"), std::string::npos);
}

TEST(ReferenceExecutorTest, DiamondAndMultiOutputNodesAndDirectOutputs) {
  GraphBuilder b(18);
  Value* x = b.Input("x", DataType::kFloat32, {2, 6});
  std::vector<Value*> parts =
      b.MultiOp("Split", {x}, 3, {Attribute::Int("axis", 1), Attribute::Int("num_outputs", 3)});
  Value* relu = b.Op("Relu", {parts[0]});
  Value* sum = b.Op("Add", {relu, parts[2]});
  Value* both = b.Op("Mul", {sum, relu}, {}, {.output_names = {"both"}});
  b.Output(both);
  b.Output(x);  // a graph input can be a graph output
  auto graph = b.Build();
  Tensor input = F32({2, 6}, {1, -2, 3, 4, 5, 6, -1, 2, 3, 4, -5, 6});
  auto out = RunReference(*graph, {{"x", input}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  // row 0: relu([1,-2]) = [1,0]; + [5,6] = [6,6]; * [1,0] = [6,0]
  // row 1: relu([-1,2]) = [0,2]; + [-5,6] = [-5,8]; * [0,2] = [0,16]
  EXPECT_EQ(Values<float>((*out)[0].second), (std::vector<float>{6, 0, 0, 16}));
  EXPECT_EQ((*out)[1].first, "x");
  EXPECT_EQ(Values<float>((*out)[1].second), Values<float>(input));
}

TEST(ReferenceExecutorTest, OpsetMustBeKnown) {
  ir::Graph graph;
  Value* x = *graph.AddInput("x", {DataType::kFloat32, Shape::FromSizes({2})});
  auto node = graph.AddNode({.op_type = "Relu", .name = "r", .inputs = {x}, .output_names = {"y"}});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(graph.AddOutput((*node)->output(0)).ok());
  EXPECT_EQ(RunReference(graph, {{"x", Iota({2})}}).status().code(), StatusCode::kInvalidArgument);
  auto out = RunReference(graph, {{"x", F32({2}, {-1, 1})}}, {.fallback_opset = 17});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0].second), (std::vector<float>{0, 1}));
}

// A real trained model end to end (its Conv/Gemm/pool kernels come from the NN part of
// the reference tier): top-1 on the first 64 Fashion-MNIST test images.
TEST(ReferenceExecutorTest, FashionMnistResNetClassifiesTestImages) {
  auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto images = ReadNpy(std::string(QTUNE_MODELS_DIR) + "/fmnist/test_2000.npy");
  auto labels = ReadNpy(std::string(QTUNE_MODELS_DIR) + "/fmnist/test_2000_labels.npy");
  ASSERT_TRUE(images.ok() && labels.ok());
  constexpr int64_t kCount = 64;
  Tensor batch = *Tensor::Allocate(DataType::kFloat32, {kCount, 1, 28, 28});
  std::copy_n(images->data<float>(), batch.num_elements(), batch.data<float>());
  auto out = RunReference(**graph, {{(*graph)->inputs()[0]->name(), batch}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& logits = (*out)[0].second;
  ASSERT_EQ(logits.sizes(), (Sizes{kCount, 10}));
  int correct = 0;
  for (int64_t i = 0; i < kCount; ++i) {
    const float* row = logits.data<float>() + i * 10;
    correct += std::max_element(row, row + 10) - row == labels->data<int64_t>()[i];
  }
  // 55/64 today (logits within 2e-6 of ONNX Runtime); the full test set gives 0.8996.
  EXPECT_GE(correct, 54) << "top-1 " << correct << "/" << kCount;
}

// Exported graphs at old opsets (weights in Constant nodes, Clip/Pad/Slice/Squeeze forms of
// opsets 9 and 11) run and give outputs in range. Matching ONNX Runtime to ~1e-5 was
// checked by hand with tools/ort/ort_run.js.
TEST(ReferenceExecutorTest, PaddleOcrModelsRunAtOpset9And11) {
  struct Case {
    std::string file;
    Sizes input;
  };
  for (const Case& c : {Case{"ppocr/ppocr_cls.onnx", {1, 3, 48, 192}},
                        Case{"ppocr/ppocrv4_det.onnx", {1, 3, 64, 96}}}) {
    auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/" + c.file);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    Tensor x = *Tensor::Allocate(DataType::kFloat32, c.input);
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      x.data<float>()[i] = static_cast<float>(i % 97) / 48.0f - 1.0f;
    }
    auto out = RunReference(**graph, {{(*graph)->inputs()[0]->name(), x}});
    ASSERT_TRUE(out.ok()) << c.file << ": " << out.status().ToString();
    const Tensor& y = (*out)[0].second;
    ASSERT_GT(y.num_elements(), 0);
    for (float v : y.span<float>()) {
      ASSERT_TRUE(v >= 0 && v <= 1) << c.file << " gives " << v;  // softmax / sigmoid
    }
  }
}

TEST(ReferenceRegistryTest, HasEveryOpOfThisTierSorted) {
  std::vector<std::string> ops = ReferenceRegistry::Get().OpTypes();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const char* op : {"Add", "Cast", "Clip", "Concat", "Gather", "Reshape", "Slice", "ReduceSum",
                         "ArgMax", "Where", "Range", "Shape", "Unsqueeze", "Pad", "TopK"}) {
    EXPECT_NE(ReferenceRegistry::Get().Find(op), nullptr) << op;
  }
}

TEST(ReferenceRegistryTest, UnknownOpsAndCustomDomainsAreUnimplemented) {
  auto unknown = RunOp({.op_type = "NoSuchOp", .inputs = {Iota({1})}, .opset = 17, .name = "n1"});
  ASSERT_EQ(unknown.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(unknown.status().message().find("NoSuchOp 'n1'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("17"), std::string::npos);

  ir::Graph graph;
  Value* x = *graph.AddInitializer("x", Iota({1}));
  auto node = graph.AddNode(
      {.op_type = "Relu", .domain = "com.example", .inputs = {x}, .output_names = {"y"}});
  ASSERT_TRUE(node.ok());
  std::vector<Tensor> inputs = {Iota({1})};
  EXPECT_EQ(EvaluateNode(**node, inputs, 17).status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace qtune::runtime::testing
