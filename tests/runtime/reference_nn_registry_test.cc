// The NN kernels are reachable through the reference registry and EvaluateNode.
#include <gtest/gtest.h>

#include <algorithm>

#include "reference_nn_test_util.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::nn {
namespace {

TEST(NnRegistryTest, EveryNnOpHasAReferenceKernel) {
  const ReferenceRegistry& registry = ReferenceRegistry::Get();
  for (const char* op : {"Conv",
                         "ConvTranspose",
                         "MaxPool",
                         "AveragePool",
                         "LpPool",
                         "GlobalAveragePool",
                         "GlobalMaxPool",
                         "GlobalLpPool",
                         "Gemm",
                         "MatMul",
                         "BatchNormalization",
                         "InstanceNormalization",
                         "LayerNormalization",
                         "GroupNormalization",
                         "LRN",
                         "Softmax",
                         "LogSoftmax",
                         "Hardmax",
                         "Resize",
                         "Upsample",
                         "DepthToSpace",
                         "SpaceToDepth"}) {
    EXPECT_NE(registry.Find(op), nullptr) << op;
  }
}

TEST(NnRegistryTest, EvaluateNodeRunsMaxPoolWithBothOutputs) {
  std::optional<testing::OnnxNodeCase> c =
      testing::LoadOnnxNodeCase("test_maxpool_with_argmax_2d_precomputed_pads");
  if (!c) GTEST_SKIP() << "ONNX node test data not installed";
  auto outputs = EvaluateNode(*c->node, c->inputs, c->opset);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_TRUE(testing::TensorsNear((*outputs)[0], c->outputs[0]));
  EXPECT_TRUE(testing::TensorsNear((*outputs)[1], c->outputs[1]));
}

TEST(NnRegistryTest, EvaluateNodeAcceptsUnrequestedOptionalOutputs) {
  // LayerNormalization with Mean omitted ("") but InvStdDev requested.
  testing::NodeSpecForTest spec{
      .op_type = "LayerNormalization", .num_outputs = 3, .output_present = {true, false, true}};
  ReferenceKernel via_registry = [](const KernelArgs& args) -> KernelResult {
    return EvaluateNode(args.node, args.inputs, args.opset);
  };
  Tensor x = testing::RandomFloats({2, 3}, 1);
  Tensor scale = Tensor::FromVector<float>({3}, {1, 1, 1});
  KernelResult r = testing::RunNode(via_registry, spec, {x, scale});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE((*r)[1].is_valid());
  EXPECT_EQ((*r)[2].sizes(), (std::vector<int64_t>{2, 1}));
}

}  // namespace
}  // namespace qtune::runtime::nn
