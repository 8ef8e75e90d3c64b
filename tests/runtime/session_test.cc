// Session behaviour a user relies on: re-planning when input sizes change, input checks
// that name the input, unsupported ops reported at compile time, plan printing.
#include "runtime/session.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/matmul_stack.h"
#include "ir/onnx_io.h"
#include "passes/pipeline.h"
#include "runtime/reference/reference_executor.h"

namespace qtune::runtime {
namespace {

std::string FmnistPath() { return std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx"; }

Tensor Ramp(std::vector<int64_t> sizes) {
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = (i % 97) / 97.0f - 0.5f;
  return t;
}

TEST(SessionTest, NewInputSizesCompileANewPlanAndOldOnesAreReused) {
  auto graph = ir::LoadModel(FmnistPath());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto session = Session::Create(**graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  for (int64_t batch : {1, 3, 1}) {
    NamedTensors inputs = {{"input", Ramp({batch, 1, 28, 28})}};
    auto outputs = (*session)->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ((*outputs)[0].second.sizes(), (std::vector<int64_t>{batch, 10}));
    auto expected = RunReference(**graph, inputs);
    ASSERT_TRUE(expected.ok());
    const Tensor& got = (*outputs)[0].second;
    const Tensor& want = (*expected)[0].second;
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-4) << "batch " << batch;
    }
  }
  auto plan1 = (*session)->Prepare({{"input", {1, 1, 28, 28}}});
  auto plan1_again = (*session)->Prepare({{"input", {1, 1, 28, 28}}});
  ASSERT_TRUE(plan1.ok() && plan1_again.ok());
  EXPECT_EQ(*plan1, *plan1_again);
  std::string printed = (*plan1)->ToString();
  EXPECT_NE(printed.find("FusedConv"), std::string::npos) << printed;
  EXPECT_NE(printed.find("arena"), std::string::npos) << printed;
}

TEST(SessionTest, WrongInputsAreRejectedWithTheInputsName) {
  auto graph = ir::LoadModel(FmnistPath());
  ASSERT_TRUE(graph.ok());
  auto session = Session::Create(**graph, SessionOptions{});
  ASSERT_TRUE(session.ok());
  auto wrong_rank = (*session)->Run({{"input", Ramp({1, 28, 28})}});
  EXPECT_EQ(wrong_rank.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_rank.status().message().find("'input' has rank 3"), std::string::npos)
      << wrong_rank.status().message();
  auto wrong_size = (*session)->Run({{"input", Ramp({1, 1, 27, 28})}});
  EXPECT_NE(wrong_size.status().message().find("[N,1,28,28]"), std::string::npos)
      << wrong_size.status().message();
  auto wrong_type = (*session)->Run({{"input", Tensor::FromVector<int64_t>({1}, {1})}});
  EXPECT_NE(wrong_type.status().message().find("int64"), std::string::npos);
  auto missing = (*session)->Run({});
  EXPECT_NE(missing.status().message().find("missing input 'input'"), std::string::npos);
}

TEST(SessionTest, UnsupportedOpIsReportedAtCompileTimeWithNodeAndOpset) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 3});
  ir::Value* y = b.Op("Relu", {x});
  ir::Value* z = b.Op("NoSuchOp", {y}, {}, {.name = "mystery", .domain = "com.example"});
  b.SetType(z, DataType::kFloat32, Shape::FromSizes({2, 3}));
  b.Output(z);
  auto session = Session::Create(*b.Build(), SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto plan = (*session)->Prepare({{"x", {2, 3}}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("NoSuchOp"), std::string::npos) << plan.status().message();
  EXPECT_NE(plan.status().message().find("mystery"), std::string::npos) << plan.status().message();
}

TEST(SessionTest, LinearLayerWithActivationRunsAsOneOnednnMatmul) {
  // 8 rows: a matrix product (up to 4 rows run as matrix-vector products, native_gemv).
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {8, 16});
  ir::Value* gemm =
      b.Op("Gemm", {x, b.Initializer("w", Ramp({8, 16})), b.Initializer("c", Ramp({8}))},
           {ir::Attribute::Int("transB", 1)});
  b.Output(b.Op("HardSwish", {gemm}));
  std::unique_ptr<ir::Graph> graph = b.Build();
  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  NamedTensors inputs = {{"x", Ramp({8, 16})}};
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  auto expected = RunReference(*graph, inputs);
  ASSERT_TRUE(expected.ok());
  for (int64_t i = 0; i < 32; ++i) {
    EXPECT_NEAR((*outputs)[0].second.data<float>()[i], (*expected)[0].second.data<float>()[i],
                1e-4);
  }
  auto plan = (*session)->Prepare({{"x", {8, 16}}});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ((*plan)->steps.size(), 1u) << (*plan)->ToString();
  EXPECT_NE((*plan)->steps[0].kernel->Describe().find("onednn:matmul"), std::string::npos);
}

TEST(SessionTest, ReferenceOnlySessionMatchesTheFastOne) {
  auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/ppocr/ppocr_cls.onnx");
  ASSERT_TRUE(graph.ok());
  NamedTensors inputs = {{"x", Ramp({1, 3, 48, 192})}};
  SessionOptions fast, reference;
  reference.use_onednn = false;
  auto a = (*Session::Create(**graph, fast))->Run(inputs);
  auto b = (*Session::Create(**graph, reference))->Run(inputs);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int64_t i = 0; i < (*a)[0].second.num_elements(); ++i) {
    EXPECT_NEAR((*a)[0].second.data<float>()[i], (*b)[0].second.data<float>()[i], 1e-4);
  }
}

// Size 0 (a batch of 0 from an empty .npy) once hit a division by zero (SIGFPE): every
// step whose outputs are all empty now computes nothing, on both tiers.
TEST(SessionTest, FmnistWithABatchOfZeroGivesAnEmptyOutput) {
  auto graph = ir::LoadModel(FmnistPath());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  for (bool use_onednn : {true, false}) {
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(**graph, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    for (int64_t batch : {0, 2, 0}) {
      auto outputs = (*session)->Run({{"input", Ramp({batch, 1, 28, 28})}});
      ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
      ASSERT_EQ(outputs->size(), 1u);
      EXPECT_EQ((*outputs)[0].second.sizes(), (std::vector<int64_t>{batch, 10}));
    }
  }
}

// Empty inputs, non-empty outputs: the reference tier computes them (no zero-size oneDNN
// primitive): Concat with an empty part, a sum over zero rows, a MatMul with K = 0.
TEST(SessionTest, EmptyInputsWithNonEmptyOutputsAreComputed) {
  ir::GraphBuilder b(13);
  ir::Value* empty = b.Input("empty", DataType::kFloat32, {0, 4});
  ir::Value* full = b.Input("full", DataType::kFloat32, {2, 4});
  ir::Value* kzero = b.Input("kzero", DataType::kFloat32, {3, 0});
  b.Output(b.Op("Concat", {empty, full}, {ir::Attribute::Int("axis", 0)}));
  b.Output(b.Op("ReduceSum", {empty, b.Initializer("axes", Tensor::FromVector<int64_t>({1}, {0}))},
                {ir::Attribute::Int("keepdims", 1)}));
  b.Output(
      b.Op("MatMul", {kzero, b.Initializer("w", *Tensor::Allocate(DataType::kFloat32, {0, 5}))}));
  std::unique_ptr<ir::Graph> graph = b.Build();
  NamedTensors inputs = {{"empty", Ramp({0, 4})}, {"full", Ramp({2, 4})}, {"kzero", Ramp({3, 0})}};
  for (bool use_onednn : {true, false}) {
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(*graph, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto outputs = (*session)->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ(outputs->size(), 3u);
    const Tensor& concat = (*outputs)[0].second;
    ASSERT_EQ(concat.sizes(), (std::vector<int64_t>{2, 4}));
    for (int64_t i = 0; i < 8; ++i) {
      EXPECT_EQ(concat.data<float>()[i], inputs[1].second.data<float>()[i]);
    }
    const Tensor& sum = (*outputs)[1].second;
    ASSERT_EQ(sum.sizes(), (std::vector<int64_t>{1, 4}));
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(sum.data<float>()[i], 0.0f);
    const Tensor& matmul = (*outputs)[2].second;
    ASSERT_EQ(matmul.sizes(), (std::vector<int64_t>{3, 5}));
    for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(matmul.data<float>()[i], 0.0f);
  }
}

}  // namespace
}  // namespace qtune::runtime

namespace qtune::runtime {
namespace {

// Prepare once (issue 26 item 5): Create copies and cleans the model once; the overload
// taking the graph over copies nothing (graph_is_clean: and cleans nothing); each plan
// makes its own fused copy once, and a plan found again makes none.
TEST(SessionTest, CreateCopiesAndCleansTheModelOnceAndTheOwnedOverloadNotAtAll) {
  std::unique_ptr<ir::Graph> model = ir::BuildMatMulStack({.layers = 2, .width = 8});
  int64_t clones = ir::Graph::CloneCount();
  int64_t pipelines = passes::PipelineRunCount();
  auto session = Session::Create(*model, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(ir::Graph::CloneCount() - clones, 1);
  EXPECT_EQ(passes::PipelineRunCount() - pipelines, 1);

  clones = ir::Graph::CloneCount();
  ASSERT_TRUE((*session)->Prepare({{"x", {1, 8}}}).ok());
  ASSERT_TRUE((*session)->Prepare({{"x", {1, 8}}}).ok());
  EXPECT_EQ(ir::Graph::CloneCount() - clones, 1) << "one fused copy per plan, made once";

  SessionOptions clean;
  clean.graph_is_clean = true;
  std::unique_ptr<ir::Graph> own = model->Clone();
  clones = ir::Graph::CloneCount();
  pipelines = passes::PipelineRunCount();
  auto adopted = Session::Create(std::move(own), clean);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_EQ(ir::Graph::CloneCount() - clones, 0);
  EXPECT_EQ(passes::PipelineRunCount() - pipelines, 0);
  EXPECT_EQ((*adopted)->graph().nodes().size(), model->nodes().size());
}

}  // namespace
}  // namespace qtune::runtime
