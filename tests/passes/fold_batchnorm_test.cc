#include "passes/fold_batchnorm.h"

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

Tensor Vec(std::vector<float> values) {
  return Tensor::FromVector<float>({static_cast<int64_t>(values.size())}, values);
}

struct BnParams {
  std::vector<float> scale, bias, mean, var;
  float epsilon = 1.0f;
};

// BatchNormalization reading `x`, its parameters as initializers "<out>_scale" etc.
ir::Node* AddBn(ir::Graph& graph, ir::Value* x, const BnParams& p, const std::string& out) {
  return AddOp(graph, {.op_type = "BatchNormalization",
                       .inputs = {x, AddInit(graph, out + "_scale", Vec(p.scale)),
                                  AddInit(graph, out + "_bias", Vec(p.bias)),
                                  AddInit(graph, out + "_mean", Vec(p.mean)),
                                  AddInit(graph, out + "_var", Vec(p.var))},
                       .outputs = {out},
                       .attributes = {ir::Attribute::Float("epsilon", p.epsilon)}});
}

// Conv(x, W=[2,1,1,1] {2,-1}, B={0.5,1}) -> BN -> "y" (a graph output).
struct ConvBnGraph {
  ir::Graph graph;
  ir::Node* conv = nullptr;
  ir::Node* bn = nullptr;
};

void BuildConvBn(ConvBnGraph& g, bool with_bias) {
  g.graph.info().opset_imports[""] = 13;
  ir::Value* x = *g.graph.AddInput("x", F32({1, 1, 2, 2}));
  ir::Value* w = AddInit(g.graph, "w", Tensor::FromVector<float>({2, 1, 1, 1}, {2, -1}));
  ir::Value* b = with_bias ? AddInit(g.graph, "b", Vec({0.5f, 1.0f})) : nullptr;
  std::vector<ir::Value*> inputs = {x, w};
  if (b != nullptr) inputs.push_back(b);
  g.conv = AddOp(g.graph, {.op_type = "Conv", .inputs = inputs, .outputs = {"conv_out"}});
  // epsilon 1 and var {3, 0}: s = scale / sqrt(var + 1) = {1 / 2, 2 / 1} = {0.5, 2}.
  g.bn = AddBn(g.graph, g.conv->output(0),
               {.scale = {1, 2}, .bias = {0.1f, -0.2f}, .mean = {1.5f, -1}, .var = {3, 0}}, "y");
  ASSERT_TRUE(g.graph.AddOutput(g.bn->output(0)).ok());
}

TEST(FoldBatchNormTest, ConvWeightsAndBiasMatchHandComputedValues) {
  ConvBnGraph g;
  BuildConvBn(g, /*with_bias=*/true);
  auto changed = FoldBatchNorm(g.graph, testing::TestOptions());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOps(g.graph, "BatchNormalization"), 0);
  EXPECT_EQ(CountOps(g.graph, "Conv"), 1);
  EXPECT_EQ(OutputNames(g.graph), std::vector<std::string>{"y"});
  EXPECT_EQ(g.conv->output(0)->name(), "y");
  // W' = W * s = {2 * 0.5, -1 * 2}; B' = (B - mean) * s + bias.
  EXPECT_EQ(Floats(g.conv->input(1)->initializer()), (std::vector<float>{1, -2}));
  std::vector<float> bias = Floats(g.conv->input(2)->initializer());
  EXPECT_FLOAT_EQ(bias[0], (0.5f - 1.5f) * 0.5f + 0.1f);
  EXPECT_FLOAT_EQ(bias[1], (1.0f + 1.0f) * 2.0f - 0.2f);
  // The BN parameters are gone; W and B were replaced in place.
  EXPECT_EQ(g.graph.initializers().size(), 2u);
  EXPECT_EQ(g.conv->input(1)->name(), "w");
  EXPECT_VERIFIES(g.graph);
}

TEST(FoldBatchNormTest, ConvWithoutBiasGetsOne) {
  ConvBnGraph g;
  BuildConvBn(g, /*with_bias=*/false);
  ASSERT_TRUE(*FoldBatchNorm(g.graph, testing::TestOptions()));
  ASSERT_NE(g.conv->input(2), nullptr);
  std::vector<float> bias = Floats(g.conv->input(2)->initializer());
  EXPECT_FLOAT_EQ(bias[0], -1.5f * 0.5f + 0.1f);
  EXPECT_FLOAT_EQ(bias[1], 1.0f * 2.0f - 0.2f);
  EXPECT_VERIFIES(g.graph);
}

TEST(FoldBatchNormTest, FoldingDoesNotWriteIntoTensorsAClonedGraphShares) {
  ConvBnGraph g;
  BuildConvBn(g, /*with_bias=*/true);
  std::unique_ptr<ir::Graph> copy = g.graph.Clone();
  ASSERT_TRUE(*FoldBatchNorm(g.graph, testing::TestOptions()));
  EXPECT_EQ(Floats(copy->FindValue("w")->initializer()), (std::vector<float>{2, -1}));
  EXPECT_EQ(Floats(copy->FindValue("b")->initializer()), (std::vector<float>{0.5f, 1.0f}));
}

TEST(FoldBatchNormTest, SharedWeightsStayForTheirOtherReader) {
  ConvBnGraph g;
  BuildConvBn(g, /*with_bias=*/true);
  ir::Node* other = AddOp(
      g.graph, {.op_type = "Conv",
                .inputs = {g.graph.FindValue("x"), g.graph.FindValue("w"), g.graph.FindValue("b")},
                .outputs = {"other"}});
  ASSERT_TRUE(g.graph.AddOutput(other->output(0)).ok());

  ASSERT_TRUE(*FoldBatchNorm(g.graph, testing::TestOptions()));
  EXPECT_EQ(Floats(other->input(1)->initializer()), (std::vector<float>{2, -1}));
  EXPECT_EQ(Floats(other->input(2)->initializer()), (std::vector<float>{0.5f, 1.0f}));
  EXPECT_NE(g.conv->input(1), other->input(1));
  EXPECT_EQ(Floats(g.conv->input(1)->initializer()), (std::vector<float>{1, -2}));
  EXPECT_EQ(OutputNames(g.graph), (std::vector<std::string>{"y", "other"}));
  EXPECT_VERIFIES(g.graph);
}

TEST(FoldBatchNormTest, ConvOutputWithAnotherReaderIsNotFolded) {
  ConvBnGraph g;
  BuildConvBn(g, /*with_bias=*/true);
  ir::Node* relu =
      AddOp(g.graph, {.op_type = "Relu", .inputs = {g.conv->output(0)}, .outputs = {"r"}});
  ASSERT_TRUE(g.graph.AddOutput(relu->output(0)).ok());
  EXPECT_FALSE(*FoldBatchNorm(g.graph, testing::TestOptions()));
  EXPECT_EQ(CountOps(g.graph, "BatchNormalization"), 1);
}

TEST(FoldBatchNormTest, TrainingModeIsNotFolded) {
  ConvBnGraph g;
  BuildConvBn(g, /*with_bias=*/true);
  g.bn->SetAttribute(ir::Attribute::Int("training_mode", 1));
  EXPECT_FALSE(*FoldBatchNorm(g.graph, testing::TestOptions()));
}

TEST(FoldBatchNormTest, NonConstantScaleIsNotFolded) {
  ConvBnGraph g;
  BuildConvBn(g, /*with_bias=*/true);
  ir::Value* scale = *g.graph.AddInput("runtime_scale", F32({2}));
  g.graph.SetNodeInput(g.bn, 1, scale);
  EXPECT_FALSE(*FoldBatchNorm(g.graph, testing::TestOptions()));
}

TEST(FoldBatchNormTest, MismatchedChannelCountIsNotFolded) {
  ConvBnGraph g;
  BuildConvBn(g, /*with_bias=*/true);
  g.graph.SetNodeInput(g.bn, 4, AddInit(g.graph, "short_var", Vec({1})));
  EXPECT_FALSE(*FoldBatchNorm(g.graph, testing::TestOptions()));
}

TEST(FoldBatchNormTest, GroupedConvTransposeScalesAlongAxisOne) {
  ir::Graph graph;
  graph.info().opset_imports[""] = 13;
  // ConvTranspose W is [C=4, M/group=3, 1, 1] with group 2, so M = 6 output channels:
  // rows 0-1 feed channels 0-2, rows 2-3 feed channels 3-5.
  std::vector<float> w_values(12);
  for (int i = 0; i < 12; ++i) w_values[i] = static_cast<float>(i + 1);
  ir::Value* x = *graph.AddInput("x", F32({1, 4, 1, 1}));
  ir::Value* w = AddInit(graph, "w", Tensor::FromVector<float>({4, 3, 1, 1}, w_values));
  ir::Node* deconv = AddOp(graph, {.op_type = "ConvTranspose",
                                   .inputs = {x, w},
                                   .outputs = {"t"},
                                   .attributes = {ir::Attribute::Int("group", 2)}});
  // var 0 and epsilon 1: s = scale = {1..6}; mean 1: B' = -s.
  ir::Node* bn = AddBn(graph, deconv->output(0),
                       {.scale = {1, 2, 3, 4, 5, 6},
                        .bias = {0, 0, 0, 0, 0, 0},
                        .mean = {1, 1, 1, 1, 1, 1},
                        .var = {0, 0, 0, 0, 0, 0}},
                       "y");
  ASSERT_TRUE(graph.AddOutput(bn->output(0)).ok());

  ASSERT_TRUE(*FoldBatchNorm(graph, testing::TestOptions()));
  EXPECT_EQ(Floats(deconv->input(1)->initializer()),
            (std::vector<float>{1, 4, 9, 4, 10, 18, 28, 40, 54, 40, 55, 72}));
  EXPECT_EQ(Floats(deconv->input(2)->initializer()), (std::vector<float>{-1, -2, -3, -4, -5, -6}));
  EXPECT_EQ(OutputNames(graph), std::vector<std::string>{"y"});
  EXPECT_VERIFIES(graph);
}

TEST(FoldBatchNormTest, NonFloatWeightsAreSkipped) {
  ir::Graph graph;
  ir::Value* x = *graph.AddInput("x", {DataType::kFloat64, Shape::FromSizes({1, 1, 1, 1})});
  ir::Value* w = AddInit(graph, "w", Tensor::FromVector<double>({1, 1, 1, 1}, {2.0}));
  ir::Node* conv = AddOp(graph, {.op_type = "Conv", .inputs = {x, w}, .outputs = {"c"}});
  ir::Node* bn = AddBn(graph, conv->output(0), {{1}, {0}, {0}, {1}}, "y");
  ASSERT_TRUE(graph.AddOutput(bn->output(0)).ok());
  EXPECT_FALSE(*FoldBatchNorm(graph, testing::TestOptions()));
}

// Random conv (or deconv) + BN with every parameter seeded; var in [0.1, 2).
struct RandomConvBn {
  std::string op_type = "Conv";
  std::vector<int64_t> input_sizes;
  std::vector<int64_t> weight_sizes;
  int64_t channels = 0;  // output channels
  std::vector<ir::Attribute> attributes;
  bool with_bias = true;
};

std::unique_ptr<ir::Graph> BuildRandomConvBn(const RandomConvBn& spec, uint32_t seed) {
  auto graph = std::make_unique<ir::Graph>();
  graph->info().opset_imports[""] = 13;
  ir::Value* x = *graph->AddInput("x", F32(spec.input_sizes));
  std::vector<ir::Value*> inputs = {
      x, AddInit(*graph, "w", testing::RandomTensor(spec.weight_sizes, seed))};
  if (spec.with_bias) {
    inputs.push_back(AddInit(*graph, "b", testing::RandomTensor({spec.channels}, seed + 1)));
  }
  ir::Node* conv = AddOp(
      *graph,
      {.op_type = spec.op_type, .inputs = inputs, .outputs = {"c"}, .attributes = spec.attributes});
  auto param = [&](const std::string& name, uint32_t offset, float low, float high) {
    return AddInit(*graph, name, testing::RandomTensor({spec.channels}, seed + offset, low, high));
  };
  ir::Node* bn = AddOp(
      *graph,
      {.op_type = "BatchNormalization",
       .inputs = {conv->output(0), param("scale", 2, 0.5f, 2.0f), param("bias", 3, -1.0f, 1.0f),
                  param("mean", 4, -1.0f, 1.0f), param("var", 5, 0.1f, 2.0f)},
       .outputs = {"y"}});
  ir::Node* relu = AddOp(*graph, {.op_type = "Relu", .inputs = {bn->output(0)}, .outputs = {"r"}});
  EXPECT_TRUE(graph->AddOutput(bn->output(0)).ok());
  EXPECT_TRUE(graph->AddOutput(relu->output(0)).ok());
  return graph;
}

void ExpectFoldKeepsOutputs(const RandomConvBn& spec) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::unique_ptr<ir::Graph> graph = BuildRandomConvBn(spec, seed);
    std::unique_ptr<ir::Graph> before = graph->Clone();
    ASSERT_TRUE(*FoldBatchNorm(*graph, testing::ReferenceOptions()));
    EXPECT_EQ(CountOps(*graph, "BatchNormalization"), 0);
    EXPECT_EQ(CountOps(*graph, spec.op_type), 1);
    EXPECT_EQ(OutputNames(*graph), (std::vector<std::string>{"y", "r"}));
    EXPECT_VERIFIES(*graph);
    testing::ExpectSameOutputs(*before, *graph, {.seed = seed, .rtol = 1e-5, .atol = 1e-5});
  }
}

TEST(FoldBatchNormTest, GroupedStridedConvOutputsAreUnchanged) {
  ExpectFoldKeepsOutputs(
      {.input_sizes = {2, 4, 9, 7},
       .weight_sizes = {6, 2, 3, 3},
       .channels = 6,
       .attributes = {ir::Attribute::Int("group", 2), ir::Attribute::Ints("pads", {1, 1, 1, 1}),
                      ir::Attribute::Ints("strides", {2, 1})}});
}

TEST(FoldBatchNormTest, ConvWithoutBiasOutputsAreUnchanged) {
  ExpectFoldKeepsOutputs({.input_sizes = {1, 3, 5, 5},
                          .weight_sizes = {5, 3, 1, 1},
                          .channels = 5,
                          .with_bias = false});
}

TEST(FoldBatchNormTest, GroupedConvTransposeOutputsAreUnchanged) {
  ExpectFoldKeepsOutputs(
      {.op_type = "ConvTranspose",
       .input_sizes = {1, 4, 5, 5},
       .weight_sizes = {4, 3, 3, 3},
       .channels = 6,
       .attributes = {ir::Attribute::Int("group", 2), ir::Attribute::Ints("strides", {2, 2})}});
}

}  // namespace
}  // namespace qtune::passes
