#include "passes/fold_constants.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "reference_check.h"

namespace qtune::passes {
namespace {

using testing::AddInit;
using testing::AddOp;
using testing::CountOps;
using testing::F32;
using testing::Floats;
using testing::OutputNames;
using testing::ToyEvaluator;

PassOptions ToyOptions(int* calls = nullptr) {
  PassOptions options = testing::TestOptions();
  options.evaluator = ToyEvaluator{calls};
  return options;
}

Tensor Vec(std::vector<float> values) {
  return Tensor::FromVector<float>({static_cast<int64_t>(values.size())}, values);
}

// c1 + c2 = s; s * c1 = p; x + p = y.
struct ChainGraph {
  ir::Graph graph;
  ir::Node* sum = nullptr;
  ir::Node* product = nullptr;
  ir::Node* tail = nullptr;
};

void BuildChain(ChainGraph& g) {
  ir::Value* x = *g.graph.AddInput("x", F32({2}));
  ir::Value* c1 = AddInit(g.graph, "c1", Vec({1, 2}));
  ir::Value* c2 = AddInit(g.graph, "c2", Vec({10, 20}));
  g.sum = AddOp(g.graph, {.op_type = "Add", .inputs = {c1, c2}, .outputs = {"s"}});
  g.product =
      AddOp(g.graph, {.op_type = "Mul", .inputs = {g.sum->output(0), c1}, .outputs = {"p"}});
  g.tail =
      AddOp(g.graph, {.op_type = "Add", .inputs = {x, g.product->output(0)}, .outputs = {"y"}});
  ASSERT_TRUE(g.graph.AddOutput(g.tail->output(0)).ok());
}

TEST(FoldConstantsTest, WithoutEvaluatorNothingChanges) {
  ChainGraph g;
  BuildChain(g);
  auto changed = FoldConstants(g.graph, testing::TestOptions());
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.graph.num_nodes(), 3u);
}

TEST(FoldConstantsTest, ChainFoldsToAFixedPointInOneCall) {
  ChainGraph g;
  BuildChain(g);
  auto changed = FoldConstants(g.graph, ToyOptions());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(g.graph.num_nodes(), 1u);
  EXPECT_EQ(CountOps(g.graph, "Mul"), 0);
  ir::Value* p = g.graph.FindValue("p");
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->is_initializer());
  EXPECT_EQ(g.tail->input(1), p);
  EXPECT_EQ(Floats(p->initializer()), (std::vector<float>{11, 44}));
  EXPECT_EQ(OutputNames(g.graph), std::vector<std::string>{"y"});
  EXPECT_VERIFIES(g.graph);
}

TEST(FoldConstantsTest, UnimplementedOpStaysAndItsConsumersToo) {
  ir::Graph graph;
  ir::Value* c = AddInit(graph, "c", Vec({1, 2}));
  ir::Node* unknown = AddOp(graph, {.op_type = "Sin", .inputs = {c}, .outputs = {"s"}});
  ir::Node* add =
      AddOp(graph, {.op_type = "Add", .inputs = {unknown->output(0), c}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(add->output(0)).ok());
  EXPECT_FALSE(*FoldConstants(graph, ToyOptions()));
  EXPECT_EQ(graph.num_nodes(), 2u);
}

TEST(FoldConstantsTest, EvaluatorErrorIsReturnedWithTheNodeName) {
  ir::Graph graph;
  ir::Value* c = AddInit(graph, "c", Vec({1}));
  ir::Node* bad = AddOp(graph, {.op_type = "Fail", .inputs = {c}, .outputs = {"f"}});
  ASSERT_TRUE(graph.AddOutput(bad->output(0)).ok());
  auto changed = FoldConstants(graph, ToyOptions());
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(changed.status().message().find("f_node"), std::string::npos)
      << changed.status().message();
}

TEST(FoldConstantsTest, OutputAboveTheSizeLimitIsNotFolded) {
  ChainGraph g;
  BuildChain(g);
  PassOptions options = ToyOptions();
  options.max_folded_tensor_bytes = 7;  // each output is 8 bytes
  EXPECT_FALSE(*FoldConstants(g.graph, options));
  EXPECT_EQ(g.graph.num_nodes(), 3u);
}

TEST(FoldConstantsTest, DeclaredOversizeOutputIsNotEvaluated) {
  ChainGraph g;
  BuildChain(g);
  g.sum->output(0)->set_type(F32({1024, 1024}));
  int calls = 0;
  PassOptions options = ToyOptions(&calls);
  options.max_folded_tensor_bytes = 1024;
  EXPECT_FALSE(*FoldConstants(g.graph, options));
  EXPECT_EQ(calls, 0);
}

TEST(FoldConstantsTest, NodesReadingGraphInputsAreNotFolded) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", F32({2}));
  ir::Value* c = AddInit(graph, "c", Vec({1, 2}));
  ir::Node* add = AddOp(graph, {.op_type = "Add", .inputs = {x, c}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(add->output(0)).ok());
  int calls = 0;
  EXPECT_FALSE(*FoldConstants(graph, ToyOptions(&calls)));
  EXPECT_EQ(calls, 0);
}

TEST(FoldConstantsTest, NondeterministicCustomAndConstantNodesAreNotEvaluated) {
  ir::Graph graph;
  ir::Value* c = AddInit(graph, "c", Vec({1, 2}));
  ir::Node* random =
      AddOp(graph, {.op_type = "RandomUniformLike", .inputs = {c}, .outputs = {"r"}});
  ir::Node* custom =
      AddOp(graph, {.op_type = "Add", .inputs = {c, c}, .outputs = {"m"}, .domain = "com.example"});
  ir::Node* constant = AddOp(graph, {.op_type = "Constant",
                                     .inputs = {},
                                     .outputs = {"k"},
                                     .attributes = {ir::Attribute::Float("value_float", 1)}});
  for (ir::Node* n : {random, custom, constant}) ASSERT_TRUE(graph.AddOutput(n->output(0)).ok());
  int calls = 0;
  EXPECT_FALSE(*FoldConstants(graph, ToyOptions(&calls)));
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(graph.num_nodes(), 3u);
}

TEST(FoldConstantsTest, UnreadNodeIsNotEvaluated) {
  ir::Graph graph;
  ir::Value* c = AddInit(graph, "c", Vec({1, 2}));
  AddOp(graph, {.op_type = "Add", .inputs = {c, c}, .outputs = {"unused"}});
  int calls = 0;
  EXPECT_FALSE(*FoldConstants(graph, ToyOptions(&calls)));
  EXPECT_EQ(calls, 0);
}

TEST(FoldConstantsTest, FoldedGraphOutputKeepsItsName) {
  ir::Graph graph;
  ir::Value* c = AddInit(graph, "c", Vec({3}));
  ir::Node* add = AddOp(graph, {.op_type = "Add", .inputs = {c, c}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(add->output(0)).ok());
  ASSERT_TRUE(*FoldConstants(graph, ToyOptions()));
  EXPECT_EQ(graph.num_nodes(), 0u);
  EXPECT_EQ(OutputNames(graph), std::vector<std::string>{"y"});
  EXPECT_TRUE(graph.outputs()[0]->is_initializer());
  EXPECT_EQ(Floats(graph.outputs()[0]->initializer()), std::vector<float>{6});
  EXPECT_VERIFIES(graph);
}

TEST(FoldConstantsTest, OmittedOptionalInputReachesTheEvaluatorAsInvalidTensor) {
  ir::Graph graph;
  ir::Value* c = AddInit(graph, "c", Vec({3}));
  ir::Node* node = AddOp(graph, {.op_type = "Probe", .inputs = {c, nullptr}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(node->output(0)).ok());
  PassOptions options = testing::TestOptions();
  size_t seen_inputs = 0;
  bool second_valid = true;
  options.evaluator = [&](const ir::Node&, std::span<const Tensor> inputs, int64_t) {
    seen_inputs = inputs.size();
    second_valid = inputs[1].is_valid();
    return StatusOr<std::vector<Tensor>>(std::vector<Tensor>{inputs[0]});
  };
  ASSERT_TRUE(*FoldConstants(graph, options));
  EXPECT_EQ(seen_inputs, 2u);
  EXPECT_FALSE(second_valid);
}

TEST(FoldConstantsTest, ReferenceKernelsFoldAChainAndOutputsAreUnchanged) {
  ir::Graph graph;
  graph.info().opset_imports[""] = 13;
  ir::Value* x = *graph.AddInput("x", F32({3, 2}));
  ir::Value* data = AddInit(graph, "data", testing::RandomTensor({6}, /*seed=*/5));
  ir::Value* shape = AddInit(graph, "shape", Tensor::FromVector<int64_t>({2}, {2, 3}));
  ir::Value* two = AddInit(graph, "two", Tensor::Scalar<float>(2.0f));
  ir::Node* reshape =
      AddOp(graph, {.op_type = "Reshape", .inputs = {data, shape}, .outputs = {"reshaped"}});
  ir::Node* transpose = AddOp(graph, {.op_type = "Transpose",
                                      .inputs = {reshape->output(0)},
                                      .outputs = {"transposed"},
                                      .attributes = {ir::Attribute::Ints("perm", {1, 0})}});
  ir::Node* scaled = AddOp(
      graph, {.op_type = "Mul", .inputs = {transpose->output(0), two}, .outputs = {"scaled"}});
  ir::Node* add =
      AddOp(graph, {.op_type = "Add", .inputs = {x, scaled->output(0)}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(add->output(0)).ok());
  std::unique_ptr<ir::Graph> before = graph.Clone();

  auto changed = FoldConstants(graph, testing::ReferenceOptions());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(graph.num_nodes(), 1u);
  EXPECT_EQ(CountOps(graph, "Add"), 1);
  ir::Value* folded = graph.FindValue("scaled");
  ASSERT_NE(folded, nullptr);
  ASSERT_TRUE(folded->is_initializer());
  EXPECT_EQ(folded->initializer().sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_VERIFIES(graph);
  testing::ExpectSameOutputs(*before, graph);
}

TEST(FoldConstantsTest, OpWithoutReferenceKernelStays) {
  ir::Graph graph;
  graph.info().opset_imports[""] = 13;
  ir::Value* c = AddInit(graph, "c", Vec({1, 2}));
  ir::Node* node = AddOp(graph, {.op_type = "NoSuchOp", .inputs = {c}, .outputs = {"y"}});
  ASSERT_TRUE(graph.AddOutput(node->output(0)).ok());
  auto changed = FoldConstants(graph, testing::ReferenceOptions());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(graph.num_nodes(), 1u);
}

}  // namespace
}  // namespace qtune::passes
