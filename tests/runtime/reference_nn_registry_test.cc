// The NN kernels are reachable through the reference registry and EvaluateNode.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/float_convert.h"
#include "reference_nn_test_util.h"
#include "runtime/reference/registry.h"
#include "util/missing_dependency.h"

namespace qtune::runtime::nn {
namespace {

// Runs a node through ReferenceRegistry::Get() as the executor does.
ReferenceKernel ViaRegistry() {
  return [](const KernelArgs& args) -> KernelResult {
    return EvaluateNode(args.node, args.inputs, args.opset);
  };
}

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
  if (!c) QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX node test data not installed";
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
  ReferenceKernel via_registry = ViaRegistry();
  Tensor x = testing::RandomFloats({2, 3}, 1);
  Tensor scale = Tensor::FromVector<float>({3}, {1, 1, 1});
  KernelResult r = testing::RunNode(via_registry, spec, {x, scale});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE((*r)[1].is_valid());
  EXPECT_EQ((*r)[2].sizes(), (std::vector<int64_t>{2, 1}));
}

Tensor ToHalf(const Tensor& t) {
  Tensor h = *Tensor::Allocate(DataType::kFloat16, t.sizes());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    h.data<uint16_t>()[i] = FloatToHalf(t.data<float>()[i]);
  }
  return h;
}

Tensor FromHalf(const Tensor& h) {
  Tensor t = *Tensor::Allocate(DataType::kFloat32, h.sizes());
  for (int64_t i = 0; i < h.num_elements(); ++i) {
    t.data<float>()[i] = HalfToFloat(h.data<uint16_t>()[i]);
  }
  return t;
}

TEST(NnRegistryTest, HalfPrecisionRunsThroughFloat32) {
  // Inputs exactly representable in float16, so only the output rounding differs.
  Tensor x = *Tensor::Allocate(DataType::kFloat32, {1, 2, 5, 5});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = (i % 7 - 3) * 0.25f;
  Tensor w = *Tensor::Allocate(DataType::kFloat32, {3, 2, 3, 3});
  for (int64_t i = 0; i < w.num_elements(); ++i) w.data<float>()[i] = (i % 5 - 2) * 0.5f;
  testing::NodeSpecForTest conv{.op_type = "Conv",
                                .attributes = {ir::Attribute::Ints("pads", {1, 1, 1, 1})}};
  Tensor expected = testing::RunOk(&Conv, conv, {x, w});
  Tensor half = testing::RunOk(ViaRegistry(), conv, {ToHalf(x), ToHalf(w)});
  ASSERT_EQ(half.dtype(), DataType::kFloat16);
  EXPECT_TRUE(testing::TensorsNear(FromHalf(half), expected, 1e-3, 1e-3));
  // MaxPool keeps its Indices int64.
  testing::NodeSpecForTest pool{.op_type = "MaxPool",
                                .attributes = {ir::Attribute::Ints("kernel_shape", {2, 2})},
                                .num_outputs = 2};
  KernelResult pooled = testing::RunNode(ViaRegistry(), pool, {ToHalf(x)});
  ASSERT_TRUE(pooled.ok()) << pooled.status().ToString();
  EXPECT_EQ((*pooled)[0].dtype(), DataType::kFloat16);
  EXPECT_EQ((*pooled)[1].dtype(), DataType::kInt64);
}

}  // namespace
}  // namespace qtune::runtime::nn
