// Normalization reference kernels: ONNX node tests, hand-computed cases and cross-checks
// (InstanceNorm == GroupNorm with a group per channel, GroupNorm with one group == LayerNorm
// over [C, ...], GroupNorm == InstanceNorm on the grouped reshape).
#include <gtest/gtest.h>

#include <cmath>

#include "reference_nn_test_util.h"
#include "util/missing_dependency.h"

namespace qtune::runtime::nn {
namespace {

using ir::Attribute;
using testing::CheckOnnxNodeCase;
using testing::LoadOnnxNodeCase;
using testing::RandomFloats;
using testing::RunNode;
using testing::RunOk;
using testing::TensorsNear;

Tensor F32(std::vector<int64_t> sizes, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(sizes), values);
}

testing::NodeSpecForTest Spec(std::string op, std::vector<Attribute> attributes = {},
                              int64_t opset = 17, size_t num_outputs = 1) {
  return {.op_type = std::move(op),
          .attributes = std::move(attributes),
          .opset = opset,
          .num_outputs = num_outputs};
}

TEST(NormTest, OnnxNodeTests) {
  struct Case {
    const char* name;
    ReferenceKernel kernel;
  };
  std::vector<Case> cases = {{"test_batchnorm_epsilon", &BatchNormalization},
                             {"test_batchnorm_example", &BatchNormalization},
                             {"test_instancenorm_epsilon", &InstanceNormalization},
                             {"test_instancenorm_example", &InstanceNormalization},
                             {"test_lrn", &Lrn},
                             {"test_lrn_default", &Lrn}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CheckOnnxNodeCase(c.name, c.kernel, 1e-5, 1e-4);
  }
  for (const char* axis :
       {"2d_axis0", "2d_axis1", "2d_axis_negative_1", "2d_axis_negative_2", "3d_axis0_epsilon",
        "3d_axis1_epsilon", "3d_axis2_epsilon", "3d_axis_negative_1_epsilon",
        "3d_axis_negative_2_epsilon", "3d_axis_negative_3_epsilon", "4d_axis0", "4d_axis1",
        "4d_axis2", "4d_axis3", "4d_axis_negative_1", "4d_axis_negative_2", "4d_axis_negative_3",
        "4d_axis_negative_4", "default_axis"}) {
    std::string name = std::string("test_layer_normalization_") + axis;
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &LayerNormalization, 1e-5, 1e-4);
  }
}

TEST(NormTest, BatchNormTrainingModeMatchesOnnxAndOldTrainingOutputsAreRejected) {
  // Opset 14+ training_mode (nn_batch_norm_training.cc): Y, running_mean, running_var.
  for (const char* name :
       {"test_batchnorm_epsilon_training_mode", "test_batchnorm_example_training_mode"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &BatchNormalization, 1e-5, 1e-4);
  }
  // Opset 9: a requested mean output is a training output.
  Tensor x = RandomFloats({1, 2, 3}, 1);
  Tensor p = F32({2}, {1, 1});
  KernelResult r =
      RunNode(&BatchNormalization, Spec("BatchNormalization", {}, 9, 2), {x, p, p, p, p});
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("BatchNormalization 'node'"), std::string::npos);
}

TEST(NormTest, BatchNormHandComputed) {
  // Channel 0: (x - 1) / sqrt(4) * 2 + 1; channel 1: (x - 0) / sqrt(1) * 1 - 1 (epsilon 0).
  Tensor x = F32({1, 2, 2}, {1, 3, 5, 7});
  Tensor y =
      RunOk(&BatchNormalization, Spec("BatchNormalization", {Attribute::Float("epsilon", 0)}),
            {x, F32({2}, {2, 1}), F32({2}, {1, -1}), F32({2}, {1, 0}), F32({2}, {4, 1})});
  EXPECT_TRUE(TensorsNear(y, F32({1, 2, 2}, {1, 3, 4, 6})));
}

TEST(NormTest, BatchNormSpatialZeroHasParametersPerElement) {
  Tensor x = F32({2, 1, 2}, {1, 2, 3, 4});
  Tensor y = RunOk(
      &BatchNormalization,
      Spec("BatchNormalization", {Attribute::Int("spatial", 0), Attribute::Float("epsilon", 0)}, 7),
      {x, F32({1, 2}, {1, 10}), F32({1, 2}, {0, 0}), F32({1, 2}, {0, 0}), F32({1, 2}, {1, 1})});
  EXPECT_TRUE(TensorsNear(y, F32({2, 1, 2}, {1, 20, 3, 40})));
}

TEST(NormTest, InstanceNormEqualsGroupNormWithOneGroupPerChannel) {
  Tensor x = RandomFloats({2, 3, 5, 7}, 2, -3, 3);
  Tensor scale = RandomFloats({3}, 3);
  Tensor bias = RandomFloats({3}, 4);
  Tensor instance = RunOk(&InstanceNormalization, Spec("InstanceNormalization"), {x, scale, bias});
  Tensor group =
      RunOk(&GroupNormalization, Spec("GroupNormalization", {Attribute::Int("num_groups", 3)}, 18),
            {x, scale, bias});
  EXPECT_TRUE(TensorsNear(instance, group));
}

TEST(NormTest, GroupNormWithOneGroupEqualsLayerNormOverChannels) {
  Tensor x = RandomFloats({2, 4, 3, 5}, 5, -2, 4);
  Tensor scale = RandomFloats({4}, 6);
  Tensor bias = RandomFloats({4}, 7);
  // Opset 21 form: scale and bias per channel.
  Tensor group =
      RunOk(&GroupNormalization, Spec("GroupNormalization", {Attribute::Int("num_groups", 1)}, 21),
            {x, scale, bias});
  Tensor layer = RunOk(&LayerNormalization, Spec("LayerNormalization", {Attribute::Int("axis", 1)}),
                       {x, *scale.Reshaped({4, 1, 1}), *bias.Reshaped({4, 1, 1})});
  EXPECT_TRUE(TensorsNear(group, layer));
}

TEST(NormTest, GroupNormEqualsInstanceNormOnTheGroupedReshape) {
  for (int64_t groups : {1, 2, 3, 6}) {
    SCOPED_TRACE(groups);
    Tensor x = RandomFloats({2, 6, 5}, 8, -1, 2);
    Tensor scale = RandomFloats({groups}, 9);
    Tensor bias = RandomFloats({groups}, 10);
    Tensor group = RunOk(&GroupNormalization,
                         Spec("GroupNormalization", {Attribute::Int("num_groups", groups)}, 18),
                         {x, scale, bias});
    Tensor instance = RunOk(&InstanceNormalization, Spec("InstanceNormalization"),
                            {*x.Reshaped({2, groups, 6 / groups * 5}), scale, bias});
    EXPECT_TRUE(TensorsNear(group, *instance.Reshaped({2, 6, 5})));
  }
  KernelResult bad = RunNode(
      &GroupNormalization, Spec("GroupNormalization", {Attribute::Int("num_groups", 4)}, 18),
      {RandomFloats({1, 6, 2}, 1), F32({4}, {1, 1, 1, 1}), F32({4}, {0, 0, 0, 0})});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("num_groups"), std::string::npos);
}

TEST(NormTest, LayerNormStatisticsOutputsAndOptionalBias) {
  Tensor x = F32({2, 2}, {1, 3, 2, 2});
  KernelResult r = RunNode(&LayerNormalization,
                           Spec("LayerNormalization", {Attribute::Float("epsilon", 0)}, 17, 3),
                           {x, F32({2}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  // Row 0: mean 2, std 1 -> (-1, 1) * (1, 2). Row 1: zero variance with epsilon 0 -> inf.
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], -1);
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[1], 2);
  EXPECT_TRUE(TensorsNear((*r)[1], F32({2, 1}, {2, 2})));
  EXPECT_FLOAT_EQ((*r)[2].data<float>()[0], 1);
  EXPECT_TRUE(std::isinf((*r)[2].data<float>()[1]));
}

TEST(NormTest, LayerNormRejectsNonBroadcastingScale) {
  KernelResult r = RunNode(&LayerNormalization, Spec("LayerNormalization"),
                           {RandomFloats({2, 3}, 1), RandomFloats({2}, 2)});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("Scale"), std::string::npos);
}

TEST(NormTest, LrnHandComputed) {
  // size 3: channel c sums squares of c-1..c+1. x = 1, 2, 3 at one pixel; alpha 3, beta 1,
  // bias 1: y_c = x_c / (1 + sum_sq).
  Tensor x = F32({1, 3, 1}, {1, 2, 3});
  Tensor y = RunOk(&Lrn,
                   Spec("LRN", {Attribute::Int("size", 3), Attribute::Float("alpha", 3),
                                Attribute::Float("beta", 1), Attribute::Float("bias", 1)}),
                   {x});
  EXPECT_TRUE(TensorsNear(y, F32({1, 3, 1}, {1.0f / 6, 2.0f / 15, 3.0f / 14})));
}

}  // namespace
}  // namespace qtune::runtime::nn
