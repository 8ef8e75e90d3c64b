#include "passes/fold_conv_affine.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "reference_check.h"

namespace qtune::passes {
namespace {

using testing::AddInit;
using testing::AddOp;
using testing::CountOps;
using testing::F32;
using testing::OutputNames;
using testing::RandomTensor;

struct Case {
  std::string op_type;         // Conv or ConvTranspose
  std::string affine;          // Mul or Add
  std::vector<int64_t> shape;  // of the constant
  bool with_bias = true;
  bool constant_first = false;  // Add(c, x) instead of Add(x, c)
  int64_t group = 1;
};

// x[1,4,5,5] -> conv (4 output channels) -> affine(c) -> "y" (graph output)
std::unique_ptr<ir::Graph> Build(const Case& c) {
  auto graph = std::make_unique<ir::Graph>();
  graph->info().opset_imports[""] = 13;
  ir::Value* x = *graph->AddInput("x", F32({1, 4, 5, 5}));
  std::vector<int64_t> w_sizes = c.op_type == "Conv" ? std::vector<int64_t>{4, 4 / c.group, 3, 3}
                                                     : std::vector<int64_t>{4, 4 / c.group, 2, 2};
  std::vector<ir::Value*> inputs = {x, AddInit(*graph, "w", RandomTensor(w_sizes, 1))};
  if (c.with_bias) inputs.push_back(AddInit(*graph, "b", RandomTensor({4}, 2)));
  std::vector<ir::Attribute> attributes = {ir::Attribute::Int("group", c.group)};
  if (c.op_type == "ConvTranspose") attributes.push_back(ir::Attribute::Ints("strides", {2, 2}));
  ir::Node* conv = AddOp(
      *graph,
      {.op_type = c.op_type, .inputs = inputs, .outputs = {"conv_out"}, .attributes = attributes});
  ir::Value* constant = AddInit(*graph, "c", RandomTensor(c.shape, 3, 0.5f, 2.0f));
  std::vector<ir::Value*> operands = {conv->output(0), constant};
  if (c.constant_first) std::swap(operands[0], operands[1]);
  ir::Node* affine = AddOp(*graph, {.op_type = c.affine, .inputs = operands, .outputs = {"y"}});
  EXPECT_TRUE(graph->AddOutput(affine->output(0)).ok());
  return graph;
}

class FoldConvAffineTest : public ::testing::TestWithParam<Case> {};

TEST_P(FoldConvAffineTest, FoldsAndKeepsOutputsAndNames) {
  const Case& c = GetParam();
  std::unique_ptr<ir::Graph> before = Build(c);
  std::unique_ptr<ir::Graph> after = Build(c);
  auto changed = FoldConvAffine(*after, testing::ReferenceOptions());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOps(*after, c.affine), 0);
  EXPECT_EQ(after->num_nodes(), 1u);
  EXPECT_EQ(OutputNames(*after), std::vector<std::string>{"y"});
  EXPECT_EQ(after->FindValue("c"), nullptr) << "the folded constant is removed";
  EXPECT_VERIFIES(*after);
  testing::ExpectSameOutputs(*before, *after);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FoldConvAffineTest,
                         ::testing::Values(Case{"Conv", "Mul", {1}}, Case{"Conv", "Mul", {4, 1, 1}},
                                           Case{"Conv", "Mul", {1, 4, 1, 1}, false},
                                           Case{"Conv", "Add", {1}},
                                           Case{"Conv", "Add", {4, 1, 1}, false},
                                           Case{"Conv", "Add", {1, 4, 1, 1}, true, true},
                                           Case{"Conv", "Mul", {4, 1, 1}, true, false, 2},
                                           Case{"ConvTranspose", "Mul", {4, 1, 1}, true, false, 2},
                                           Case{"ConvTranspose", "Add", {1, 4, 1, 1}, false}));

TEST(FoldConvAffineTest, ConstantVaryingAlongASpatialAxisIsLeftAlone) {
  Case c{"Conv", "Mul", {1, 1, 1, 3}};  // broadcasts along W, not per channel
  std::unique_ptr<ir::Graph> graph = Build(c);
  auto changed = FoldConvAffine(*graph, testing::ReferenceOptions());
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOps(*graph, "Mul"), 1);
}

TEST(FoldConvAffineTest, ConvOutputReadTwiceIsLeftAlone) {
  std::unique_ptr<ir::Graph> graph = Build(Case{"Conv", "Add", {1}});
  ir::Value* conv_out = graph->FindValue("conv_out");
  ir::Node* relu = AddOp(*graph, {.op_type = "Relu", .inputs = {conv_out}, .outputs = {"r"}});
  ASSERT_TRUE(graph->AddOutput(relu->output(0)).ok());
  auto changed = FoldConvAffine(*graph, testing::ReferenceOptions());
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

// x[1,4,5,5] -> Mul(x, c) -> conv (pads 1, group) -> "y": a scale per input channel
// (AWQ's 1/s before a Conv), read by the conv and, with `also_relu`, by a Relu too.
std::unique_ptr<ir::Graph> BuildInputScale(std::vector<int64_t> shape, int64_t group,
                                           bool also_relu) {
  auto graph = std::make_unique<ir::Graph>();
  graph->info().opset_imports[""] = 13;
  ir::Value* x = *graph->AddInput("x", F32({1, 4, 5, 5}));
  ir::Value* c = AddInit(*graph, "c", RandomTensor(shape, 3, 0.5f, 2.0f));
  ir::Node* mul = AddOp(*graph, {.op_type = "Mul", .inputs = {x, c}, .outputs = {"scaled"}});
  ir::Node* conv =
      AddOp(*graph,
            {.op_type = "Conv",
             .inputs = {mul->output(0), AddInit(*graph, "w", RandomTensor({6, 4 / group, 3, 3}, 1)),
                        AddInit(*graph, "b", RandomTensor({6}, 2))},
             .outputs = {"y"},
             .attributes = {ir::Attribute::Int("group", group),
                            ir::Attribute::Ints("pads", {1, 1, 1, 1})}});
  EXPECT_TRUE(graph->AddOutput(conv->output(0)).ok());
  if (also_relu) {
    ir::Node* relu =
        AddOp(*graph, {.op_type = "Relu", .inputs = {mul->output(0)}, .outputs = {"r"}});
    EXPECT_TRUE(graph->AddOutput(relu->output(0)).ok());
  }
  return graph;
}

TEST(FoldConvAffineTest, InputChannelScaleBeforeAConvFoldsIntoItsWeights) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, 4, 1, 1}, std::vector<int64_t>{4, 1, 1}, std::vector<int64_t>{1}}) {
    std::unique_ptr<ir::Graph> before = BuildInputScale(shape, 1, false);
    std::unique_ptr<ir::Graph> after = BuildInputScale(shape, 1, false);
    auto changed = FoldConvAffine(*after, testing::ReferenceOptions());
    ASSERT_TRUE(changed.ok()) << changed.status().ToString();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(CountOps(*after, "Mul"), 0);
    EXPECT_EQ(after->FindValue("c"), nullptr);
    EXPECT_VERIFIES(*after);
    testing::ExpectSameOutputs(*before, *after);
  }
}

TEST(FoldConvAffineTest, InputScaleReadByAnotherOpOrBeforeAGroupedConvIsLeftAlone) {
  for (const auto& [group, relu] : {std::pair<int64_t, bool>{1, true}, {2, false}}) {
    std::unique_ptr<ir::Graph> graph = BuildInputScale({1, 4, 1, 1}, group, relu);
    auto changed = FoldConvAffine(*graph, testing::ReferenceOptions());
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed);
    EXPECT_EQ(CountOps(*graph, "Mul"), 1);
  }
}

}  // namespace
}  // namespace qtune::passes
