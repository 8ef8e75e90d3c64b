// ConvTranspose reference kernel: hand-computed cases, ONNX node tests, and the adjoint
// identity <Conv(x), y> == <x, ConvTranspose(y)> with the same weights.
#include <gtest/gtest.h>

#include <cmath>

#include "reference_nn_test_util.h"

namespace qtune::runtime::nn {
namespace {

using ir::Attribute;
using testing::CheckOnnxNodeCase;
using testing::Dot;
using testing::RandomFloats;
using testing::RunOk;
using testing::TensorsNear;

Tensor F32(std::vector<int64_t> sizes, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(sizes), values);
}

testing::NodeSpecForTest Spec(std::string op, std::vector<Attribute> attributes) {
  return {.op_type = std::move(op), .attributes = std::move(attributes)};
}

TEST(ConvTransposeTest, HandComputedStrided1d) {
  // Each x element scatters x * [1 10 100] at 2 * i: 1 10 (100+2) 20 200.
  Tensor x = F32({1, 1, 2}, {1, 2});
  Tensor w = F32({1, 1, 3}, {1, 10, 100});
  Tensor y =
      RunOk(&ConvTranspose, Spec("ConvTranspose", {Attribute::Ints("strides", {2})}), {x, w});
  EXPECT_TRUE(TensorsNear(y, F32({1, 1, 5}, {1, 10, 102, 20, 200})));
  Tensor cropped = RunOk(
      &ConvTranspose,
      Spec("ConvTranspose", {Attribute::Ints("strides", {2}), Attribute::Ints("pads", {1, 1})}),
      {x, w, F32({1}, {0.5f})});
  EXPECT_TRUE(TensorsNear(cropped, F32({1, 1, 3}, {10.5f, 102.5f, 20.5f})));
  Tensor padded_out = RunOk(&ConvTranspose,
                            Spec("ConvTranspose", {Attribute::Ints("strides", {2}),
                                                   Attribute::Ints("output_padding", {1})}),
                            {x, w});
  EXPECT_TRUE(TensorsNear(padded_out, F32({1, 1, 6}, {1, 10, 102, 20, 200, 0})));
}

TEST(ConvTransposeTest, OnnxNodeTests) {
  for (const char* name :
       {"test_convtranspose", "test_convtranspose_1d", "test_convtranspose_3d",
        "test_convtranspose_autopad_same", "test_convtranspose_dilations",
        "test_convtranspose_kernel_shape", "test_convtranspose_output_shape",
        "test_convtranspose_pad", "test_convtranspose_pads", "test_convtranspose_with_kernel"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &ConvTranspose);
  }
}

TEST(ConvTransposeTest, OutputShapeEqualsExplicitPads) {
  Tensor x = RandomFloats({1, 2, 3, 4}, 1);
  Tensor w = RandomFloats({2, 3, 3, 3}, 2);
  // Natural size: H 2*2+3 = 7, W 2*3+3 = 9. Requested 6 x 8: one pixel of padding each, at
  // the start (NOTSET, SAME_LOWER) or the end (SAME_UPPER).
  Tensor by_shape = RunOk(&ConvTranspose,
                          Spec("ConvTranspose", {Attribute::Ints("strides", {2, 2}),
                                                 Attribute::Ints("output_shape", {6, 8})}),
                          {x, w});
  Tensor by_pads = RunOk(&ConvTranspose,
                         Spec("ConvTranspose", {Attribute::Ints("strides", {2, 2}),
                                                Attribute::Ints("pads", {1, 1, 0, 0})}),
                         {x, w});
  EXPECT_TRUE(TensorsNear(by_shape, by_pads));
  Tensor same_upper = RunOk(&ConvTranspose,
                            Spec("ConvTranspose", {Attribute::Ints("strides", {2, 2}),
                                                   Attribute::String("auto_pad", "SAME_UPPER")}),
                            {x, w});
  Tensor end_pads = RunOk(&ConvTranspose,
                          Spec("ConvTranspose", {Attribute::Ints("strides", {2, 2}),
                                                 Attribute::Ints("pads", {0, 0, 1, 1})}),
                          {x, w});
  EXPECT_TRUE(TensorsNear(same_upper, end_pads));
  EXPECT_EQ(same_upper.sizes(), (std::vector<int64_t>{1, 3, 6, 8}));
}

struct AdjointCase {
  std::vector<int64_t> spatial;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  int64_t channels;
  int64_t filters;
  int64_t group;
};

TEST(ConvTransposeTest, IsTheAdjointOfConv) {
  uint32_t seed = 10;
  const std::vector<AdjointCase> cases = {
      {{7}, {3}, {2}, {1}, {1, 0}, 2, 3, 1},
      {{17}, {5}, {3}, {2}, {2, 3}, 4, 2, 2},
      {{5, 7}, {3, 2}, {2, 3}, {1, 2}, {1, 0, 2, 1}, 3, 4, 1},
      {{15, 5}, {3, 3}, {1, 2}, {2, 1}, {0, 1, 1, 1}, 6, 6, 3},
      {{5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 4, 4, 4},
      {{1, 3}, {1, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1}, 1, 2, 1},
      {{3, 5, 4}, {2, 3, 2}, {2, 1, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}, 2, 4, 2},
  };
  for (const AdjointCase& c : cases) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const size_t rank = c.spatial.size();
    std::vector<int64_t> x_sizes = {2, c.channels};
    x_sizes.insert(x_sizes.end(), c.spatial.begin(), c.spatial.end());
    std::vector<int64_t> w_sizes = {c.filters, c.channels / c.group};
    w_sizes.insert(w_sizes.end(), c.kernel.begin(), c.kernel.end());
    Tensor x = RandomFloats(x_sizes, seed++);
    Tensor w = RandomFloats(w_sizes, seed++);
    std::vector<Attribute> attrs = {
        Attribute::Ints("strides", c.strides), Attribute::Ints("dilations", c.dilations),
        Attribute::Ints("pads", c.pads), Attribute::Int("group", c.group)};
    Tensor conv = RunOk(&Conv, Spec("Conv", attrs), {x, w});
    ASSERT_TRUE(conv.is_valid());
    Tensor y = RandomFloats(conv.sizes(), seed++);
    // Conv drops the input pixels past the last full window; output_padding restores them.
    std::vector<int64_t> output_padding(rank);
    for (size_t i = 0; i < rank; ++i) {
      int64_t extent = (c.kernel[i] - 1) * c.dilations[i] + 1;
      output_padding[i] = (c.spatial[i] + c.pads[i] + c.pads[rank + i] - extent) % c.strides[i];
    }
    attrs.push_back(Attribute::Ints("output_padding", output_padding));
    Tensor transposed = RunOk(&ConvTranspose, Spec("ConvTranspose", attrs), {y, w});
    ASSERT_EQ(transposed.sizes(), x.sizes());
    double lhs = Dot(conv, y);
    double rhs = Dot(x, transposed);
    EXPECT_NEAR(lhs, rhs, 1e-4 * (1 + std::fabs(lhs)));
  }
}

TEST(ConvTransposeTest, BadWeightChannelsNameTheNode) {
  Tensor x = RandomFloats({1, 4, 3, 3}, 1);
  Tensor w = RandomFloats({3, 2, 3, 3}, 2);
  auto result = testing::RunNode(&ConvTranspose, Spec("ConvTranspose", {}), {x, w});
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("ConvTranspose 'node'"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime::nn
