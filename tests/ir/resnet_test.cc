// BuildResNet18: torchvision's ResNet-18 layout from the graph builder, the model that
// speed, fusion and op-count tests use on a clone without ../shared.
#include "ir/resnet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "ir/onnx_io.h"
#include "ir/verify.h"

namespace qtune::ir {
namespace {

std::map<std::string, int> OpCounts(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node* node : graph.nodes()) ++counts[node->op_type()];
  return counts;
}

// Built once: each build draws 11.7M random weights.
const Graph& DefaultResNet18() {
  static const Graph* graph = BuildResNet18().release();
  return *graph;
}

int64_t ParameterCount(const Graph& graph) {
  int64_t n = 0;
  for (const Value* v : graph.initializers()) n += v->initializer().num_elements();
  return n;
}

TEST(ResNet18Test, HasTorchvisionOpCounts) {
  const Graph* g = &DefaultResNet18();
  ASSERT_TRUE(Verify(*g).ok());
  std::map<std::string, int> want = {
      {"Conv", 20},   {"BatchNormalization", 20}, {"Relu", 17},   {"Add", 8},
      {"MaxPool", 1}, {"GlobalAveragePool", 1},   {"Flatten", 1}, {"Gemm", 1}};
  EXPECT_EQ(OpCounts(*g), want);
  EXPECT_EQ(g->onnx_opset(), 13);
}

// torchvision's resnet18 has 11,689,512 parameters; BatchNormalization's running mean and
// variance add 2 x 4,800 (the channels of its 20 BatchNormalizations).
TEST(ResNet18Test, HasTorchvisionParameterCount) {
  EXPECT_EQ(ParameterCount(DefaultResNet18()), 11'689'512 + 2 * 4'800);
}

TEST(ResNet18Test, InputAndOutputMatchTheExportedModel) {
  ResNet18Options options;
  options.batch = 2;
  std::unique_ptr<Graph> g = BuildResNet18(options);
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->name(), "input");
  EXPECT_EQ(g->inputs()[0]->type().shape->ToString(), "[2,3,224,224]");
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0]->name(), "logits");
  EXPECT_EQ(g->outputs()[0]->type().shape->ToString(), "[2,1000]");
  EXPECT_EQ(DefaultResNet18().inputs()[0]->type().shape->ToString(), "[N,3,224,224]");
}

TEST(ResNet18Test, WeightsAreSeededAndHeScaled) {
  ResNet18Options seven;
  seven.seed = 7;
  auto a = BuildResNet18(seven), b = BuildResNet18(seven);
  const Tensor& wa = a->FindValue("layer3.1.conv2.weight")->initializer();
  const Tensor& wb = b->FindValue("layer3.1.conv2.weight")->initializer();
  const Tensor& wc = DefaultResNet18().FindValue("layer3.1.conv2.weight")->initializer();
  EXPECT_EQ(0, std::memcmp(wa.data<float>(), wb.data<float>(), wa.byte_size()));
  EXPECT_NE(0, std::memcmp(wa.data<float>(), wc.data<float>(), wa.byte_size()));
  double sum_sq = 0;
  for (float v : wa.span<float>()) sum_sq += double{v} * v;
  double stddev = std::sqrt(sum_sq / wa.num_elements());
  EXPECT_NEAR(stddev, std::sqrt(2.0 / (256 * 9)), 0.002);  // He: sqrt(2 / fan_in)
}

TEST(ResNet18Test, SavesAndLoadsBack) {
  std::string path = ::testing::TempDir() + "/resnet18_builder_test.onnx";
  ASSERT_TRUE(SaveModel(DefaultResNet18(), path).ok());
  auto loaded = LoadModel(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(OpCounts(**loaded), OpCounts(DefaultResNet18()));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace qtune::ir
