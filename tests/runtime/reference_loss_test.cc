// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: every ONNX node test, float16,
// every position ignored, and an out-of-range class as an error naming the node.
#include <gtest/gtest.h>

#include <cmath>

#include "reference_nn_test_util.h"
#include "runtime/reference/loss_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using ir::Attribute;
using nn::testing::CheckOnnxNodeCase;
using nn::testing::NodeSpecForTest;
using nn::testing::RandomFloats;
using nn::testing::RunNode;
using nn::testing::RunOk;
using nn::testing::TensorsNear;

NodeSpecForTest Spec(std::string op, std::vector<Attribute> attributes = {},
                     size_t num_outputs = 1) {
  return {.op_type = std::move(op),
          .attributes = std::move(attributes),
          .opset = 13,
          .num_outputs = num_outputs};
}

TEST(LossTest, OnnxNodeTests) {
  for (const char* name : {
           "test_nllloss_NC",
           "test_nllloss_NCd1",
           "test_nllloss_NCd1_ii",
           "test_nllloss_NCd1_mean_weight_negative_ii",
           "test_nllloss_NCd1_weight",
           "test_nllloss_NCd1_weight_ii",
           "test_nllloss_NCd1d2",
           "test_nllloss_NCd1d2_no_weight_reduction_mean_ii",
           "test_nllloss_NCd1d2_reduction_mean",
           "test_nllloss_NCd1d2_reduction_sum",
           "test_nllloss_NCd1d2_with_weight",
           "test_nllloss_NCd1d2_with_weight_reduction_mean",
           "test_nllloss_NCd1d2_with_weight_reduction_sum",
           "test_nllloss_NCd1d2_with_weight_reduction_sum_ii",
           "test_nllloss_NCd1d2d3_none_no_weight_negative_ii",
           "test_nllloss_NCd1d2d3_sum_weight_high_ii",
           "test_nllloss_NCd1d2d3d4d5_mean_weight",
           "test_nllloss_NCd1d2d3d4d5_none_no_weight",
           "test_sce_NCd1_mean_weight_negative_ii",
           "test_sce_NCd1_mean_weight_negative_ii_log_prob",
           "test_sce_NCd1d2d3_none_no_weight_negative_ii",
           "test_sce_NCd1d2d3_none_no_weight_negative_ii_log_prob",
           "test_sce_NCd1d2d3_sum_weight_high_ii",
           "test_sce_NCd1d2d3_sum_weight_high_ii_log_prob",
           "test_sce_NCd1d2d3d4d5_mean_weight",
           "test_sce_NCd1d2d3d4d5_mean_weight_log_prob",
           "test_sce_NCd1d2d3d4d5_none_no_weight",
           "test_sce_NCd1d2d3d4d5_none_no_weight_log_prob",
           "test_sce_mean",
           "test_sce_mean_3d",
           "test_sce_mean_3d_log_prob",
           "test_sce_mean_log_prob",
           "test_sce_mean_no_weight_ii",
           "test_sce_mean_no_weight_ii_3d",
           "test_sce_mean_no_weight_ii_3d_log_prob",
           "test_sce_mean_no_weight_ii_4d",
           "test_sce_mean_no_weight_ii_4d_log_prob",
           "test_sce_mean_no_weight_ii_log_prob",
           "test_sce_mean_weight",
           "test_sce_mean_weight_ii",
           "test_sce_mean_weight_ii_3d",
           "test_sce_mean_weight_ii_3d_log_prob",
           "test_sce_mean_weight_ii_4d",
           "test_sce_mean_weight_ii_4d_log_prob",
           "test_sce_mean_weight_ii_log_prob",
           "test_sce_mean_weight_log_prob",
           "test_sce_none",
           "test_sce_none_log_prob",
           "test_sce_none_weights",
           "test_sce_none_weights_log_prob",
           "test_sce_sum",
           "test_sce_sum_log_prob",
       }) {
    SCOPED_TRACE(name);
    const bool nll = std::string(name).rfind("test_nllloss", 0) == 0;
    CheckOnnxNodeCase(name, nll ? &NegativeLogLikelihoodLoss : &SoftmaxCrossEntropyLoss, 1e-5,
                      1e-4);
  }
}

// Mean over weights: sum(-w[t] x[n, t]) / sum(w[t]); ignored positions count in neither.
TEST(LossTest, WeightedMeanSkipsIgnoredPositions) {
  Tensor x = Tensor::FromVector<float>({3, 2}, {-1, -2, -3, -4, -5, -6});
  Tensor target = Tensor::FromVector<int64_t>({3}, {1, -1, 0});
  Tensor weight = Tensor::FromVector<float>({2}, {0.5f, 2});
  Tensor loss = RunOk(&NegativeLogLikelihoodLoss,
                      Spec("NegativeLogLikelihoodLoss", {Attribute::Int("ignore_index", -1)}),
                      {x, target, weight});
  EXPECT_NEAR(loss.data<float>()[0], (2 * 2 + 0.5 * 5) / 2.5, 1e-6);
  // Every position ignored: the mean is 0 / 0.
  Tensor all_ignored = RunOk(&NegativeLogLikelihoodLoss,
                             Spec("NegativeLogLikelihoodLoss", {Attribute::Int("ignore_index", 1)}),
                             {x, Tensor::FromVector<int32_t>({3}, {1, 1, 1})});
  EXPECT_TRUE(std::isnan(all_ignored.data<float>()[0]));
}

// float16 scores; log_prob is the log-softmax over dimension 1 of an [N, C, d] input.
TEST(LossTest, SoftmaxCrossEntropyFloat16WithLogProb) {
  Tensor scores32 = RandomFloats({2, 3, 5}, 7, -2, 2);
  auto scores16 = FromFloat32(scores32, DataType::kFloat16);
  ASSERT_TRUE(scores16.ok());
  Tensor target = Tensor::FromVector<int64_t>({2, 5}, {0, 1, 2, 0, 1, 2, 2, 1, 0, 0});
  auto out16 = RunNode(&SoftmaxCrossEntropyLoss,
                       Spec("SoftmaxCrossEntropyLoss", {Attribute::String("reduction", "sum")}, 2),
                       {*scores16, target});
  ASSERT_TRUE(out16.ok()) << out16.status().ToString();
  ASSERT_EQ(out16->size(), 2u);
  EXPECT_EQ((*out16)[0].dtype(), DataType::kFloat16);
  EXPECT_EQ((*out16)[1].sizes(), scores32.sizes());
  auto out32 = RunNode(&SoftmaxCrossEntropyLoss,
                       Spec("SoftmaxCrossEntropyLoss", {Attribute::String("reduction", "sum")}, 2),
                       {*ToFloat32(*scores16), target});
  ASSERT_TRUE(out32.ok());
  EXPECT_TRUE(TensorsNear(*ToFloat32((*out16)[0]), (*out32)[0], 1e-2, 1e-3));
  EXPECT_TRUE(TensorsNear(*ToFloat32((*out16)[1]), (*out32)[1], 1e-2, 1e-3));
  // exp(log_prob) sums to 1 over the classes.
  const Tensor& lp = (*out32)[1];
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t d = 0; d < 5; ++d) {
      double sum = 0;
      for (int64_t c = 0; c < 3; ++c) sum += std::exp(lp.data<float>()[(n * 3 + c) * 5 + d]);
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
}

TEST(LossTest, ClassOutOfRangeIsAnErrorNamingTheNode) {
  auto loss = RunNode(&NegativeLogLikelihoodLoss, Spec("NegativeLogLikelihoodLoss"),
                      {RandomFloats({2, 3}, 1), Tensor::FromVector<int64_t>({2}, {0, 3})});
  ASSERT_FALSE(loss.ok());
  EXPECT_EQ(loss.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loss.status().message().find("NegativeLogLikelihoodLoss '"), std::string::npos);
  EXPECT_NE(loss.status().message().find("target[1] = 3"), std::string::npos)
      << loss.status().ToString();
  auto shapes = RunNode(
      &SoftmaxCrossEntropyLoss, Spec("SoftmaxCrossEntropyLoss"),
      {RandomFloats({2, 3, 4}, 1), Tensor::FromVector<int64_t>({2, 3}, {0, 0, 0, 0, 0, 0})});
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.status().message().find("[N, C, d1..dk] and [N, d1..dk]"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime::reference
