// Softmax, LogSoftmax, Hardmax: ONNX node tests, opset-dependent axis semantics, numerical
// stability, ties.
#include <gtest/gtest.h>

#include <cmath>

#include "reference_nn_test_util.h"

namespace qtune::runtime::nn {
namespace {

using ir::Attribute;
using testing::CheckOnnxNodeCase;
using testing::RandomFloats;
using testing::RunOk;
using testing::TensorsNear;

Tensor F32(std::vector<int64_t> sizes, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(sizes), values);
}

testing::NodeSpecForTest Spec(std::string op, int64_t opset,
                              std::vector<Attribute> attributes = {}) {
  return {.op_type = std::move(op), .attributes = std::move(attributes), .opset = opset};
}

TEST(SoftmaxTest, OnnxNodeTests) {
  for (const char* suffix :
       {"axis_0", "axis_1", "axis_2", "default_axis", "example", "large_number", "negative_axis"}) {
    std::string name = std::string("test_softmax_") + suffix;
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &Softmax);
  }
  for (const char* suffix : {"axis_0", "axis_1", "axis_2", "default_axis", "example_1",
                             "large_number", "negative_axis"}) {
    std::string name = std::string("test_logsoftmax_") + suffix;
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &LogSoftmax);
  }
  for (const char* suffix :
       {"axis_0", "axis_1", "axis_2", "default_axis", "example", "negative_axis", "one_hot"}) {
    std::string name = std::string("test_hardmax_") + suffix;
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &Hardmax);
  }
}

// Sums of `t` over groups: element i belongs to group (i / (count * stride)) * stride +
// i % stride.
std::vector<double> GroupSums(const Tensor& t, int64_t count, int64_t stride) {
  std::vector<double> sums(t.num_elements() / count, 0.0);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    sums[(i / (count * stride)) * stride + i % stride] += t.data<float>()[i];
  }
  return sums;
}

TEST(SoftmaxTest, OpsetDecidesBetweenCoercedTwoDAndSingleAxis) {
  Tensor x = RandomFloats({2, 3, 4}, 1, -3, 3);
  // Opset 11, axis 1: each batch's 12 values sum to 1.
  Tensor old_semantics = RunOk(&Softmax, Spec("Softmax", 11, {Attribute::Int("axis", 1)}), {x});
  for (double s : GroupSums(old_semantics, 12, 1)) EXPECT_NEAR(s, 1, 1e-6);
  // Opset 13, axis 1: each (n, w) column of 3 values sums to 1.
  Tensor new_semantics = RunOk(&Softmax, Spec("Softmax", 13, {Attribute::Int("axis", 1)}), {x});
  for (double s : GroupSums(new_semantics, 3, 4)) EXPECT_NEAR(s, 1, 1e-6);
  EXPECT_FALSE(TensorsNear(old_semantics, new_semantics));
  // Defaults: axis 1 before 13 (over [3, 4]), -1 from 13 (over 4).
  EXPECT_TRUE(TensorsNear(RunOk(&Softmax, Spec("Softmax", 11), {x}), old_semantics));
  Tensor last = RunOk(&Softmax, Spec("Softmax", 13), {x});
  for (double s : GroupSums(last, 4, 1)) EXPECT_NEAR(s, 1, 1e-6);
  // Before 13, axis 2 of a 3-D tensor coerces to [6, 4], the same as opset 13's axis -1.
  EXPECT_TRUE(
      TensorsNear(RunOk(&Softmax, Spec("Softmax", 11, {Attribute::Int("axis", 2)}), {x}), last));
  // Hardmax before 13 picks one maximum per coerced row.
  Tensor hard = RunOk(&Hardmax, Spec("Hardmax", 11), {x});
  for (double s : GroupSums(hard, 12, 1)) EXPECT_EQ(s, 1);
}

TEST(SoftmaxTest, LargeInputsAreStable) {
  Tensor x = F32({1, 3}, {1000, 1001, 1002});
  Tensor y = RunOk(&Softmax, Spec("Softmax", 13), {x});
  EXPECT_TRUE(TensorsNear(y, F32({1, 3}, {0.09003057f, 0.24472847f, 0.66524096f}), 1e-6));
  Tensor log_y = RunOk(&LogSoftmax, Spec("LogSoftmax", 13), {x});
  EXPECT_TRUE(TensorsNear(log_y, F32({1, 3}, {-2.40760596f, -1.40760596f, -0.40760596f}), 1e-6));
  Tensor negative = RunOk(&Softmax, Spec("Softmax", 13), {F32({2}, {-1e30f, -1e30f})});
  EXPECT_TRUE(TensorsNear(negative, F32({2}, {0.5f, 0.5f})));
}

TEST(SoftmaxTest, LogSoftmaxIsTheLogOfSoftmaxOverOddSizes) {
  uint32_t seed = 10;
  for (int64_t n : {1, 2, 3, 5, 7, 15, 17}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Tensor x = RandomFloats({3, n, 2}, seed++, -10, 10);
    Tensor soft = RunOk(&Softmax, Spec("Softmax", 13, {Attribute::Int("axis", -2)}), {x});
    Tensor log_soft = RunOk(&LogSoftmax, Spec("LogSoftmax", 13, {Attribute::Int("axis", 1)}), {x});
    std::vector<float> logs(soft.num_elements());
    for (int64_t i = 0; i < soft.num_elements(); ++i) logs[i] = std::log(soft.data<float>()[i]);
    EXPECT_TRUE(TensorsNear(log_soft, F32(x.sizes(), logs), 1e-5, 1e-5));
    for (double s : GroupSums(soft, n, 2)) EXPECT_NEAR(s, 1, 1e-6);
  }
}

TEST(SoftmaxTest, HardmaxPicksTheFirstOfTiedMaxima) {
  Tensor x = F32({2, 3}, {1, 3, 3, 2, 2, 2});
  EXPECT_TRUE(
      TensorsNear(RunOk(&Hardmax, Spec("Hardmax", 13), {x}), F32({2, 3}, {0, 1, 0, 1, 0, 0})));
}

TEST(SoftmaxTest, Float64AndAxisErrors) {
  Tensor x = Tensor::FromVector<double>({2}, {0, std::log(3.0)});
  Tensor y = RunOk(&Softmax, Spec("Softmax", 13), {x});
  EXPECT_DOUBLE_EQ(y.data<double>()[0], 0.25);
  KernelResult bad =
      testing::RunNode(&Softmax, Spec("Softmax", 13, {Attribute::Int("axis", 1)}), {x});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Softmax 'node': axis 1"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime::nn
