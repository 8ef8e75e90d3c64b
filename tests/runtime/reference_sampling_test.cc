// GridSample and RoiAlign: ONNX node tests, a 3-D (volumetric) and a 1-D GridSample that
// the node tests do not cover, reflection far outside the input, and errors naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference_nn_test_util.h"
#include "runtime/reference/sampling_kernels.h"

namespace qtune::runtime::reference {
namespace {

using ir::Attribute;
using nn::testing::CheckOnnxNodeCase;
using nn::testing::NodeSpecForTest;
using nn::testing::RandomFloats;
using nn::testing::RunNode;
using nn::testing::RunOk;
using nn::testing::TensorsNear;

NodeSpecForTest Spec(std::string op, int64_t opset, std::vector<Attribute> attributes = {}) {
  return {.op_type = std::move(op), .attributes = std::move(attributes), .opset = opset};
}

// Some expected outputs are rounded to 4 decimals.
TEST(SamplingTest, OnnxNodeTests) {
  for (const char* name :
       {"test_gridsample", "test_gridsample_aligncorners_true", "test_gridsample_bicubic",
        "test_gridsample_bilinear", "test_gridsample_border_padding", "test_gridsample_nearest",
        "test_gridsample_reflection_padding", "test_gridsample_zeros_padding"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &GridSample, 1e-4, 1e-4);
  }
  CheckOnnxNodeCase("test_roialign_aligned_false", &RoiAlign, 1e-4, 1e-4);
  CheckOnnxNodeCase("test_roialign_aligned_true", &RoiAlign, 1e-4, 1e-4);
}

// Trilinear interpolation reproduces a function linear in each coordinate exactly inside
// the volume: f(z, y, x) = 1 + 2x + 3y + 5z on a 3x4x5 volume, with align_corners.
TEST(SamplingTest, GridSample3dLinearIsExactOnLinearData) {
  const int64_t d = 3, h = 4, w = 5;
  std::vector<float> volume;
  for (int64_t z = 0; z < d; ++z)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) volume.push_back(1.0f + 2 * x + 3 * y + 5 * z);
  Tensor grid = RandomFloats({1, 2, 3, 7, 3}, 4, -1, 1);  // (x, y, z) normalized
  Tensor out = RunOk(&GridSample, Spec("GridSample", 20, {Attribute::Int("align_corners", 1)}),
                     {Tensor::FromVector<float>({1, 1, d, h, w}, volume), grid});
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{1, 1, 2, 3, 7}));
  for (int64_t p = 0; p < out.num_elements(); ++p) {
    const float* g = &grid.data<float>()[p * 3];
    const double x = (g[0] + 1) / 2 * (w - 1), y = (g[1] + 1) / 2 * (h - 1),
                 z = (g[2] + 1) / 2 * (d - 1);
    EXPECT_NEAR(out.data<float>()[p], 1 + 2 * x + 3 * y + 5 * z, 1e-4) << "point " << p;
  }
}

// 1-D input (N, C, W): nearest rounds half to even; border and reflection far outside.
TEST(SamplingTest, GridSample1dNearestBorderAndReflection) {
  Tensor x = Tensor::FromVector<float>({1, 1, 4}, {10, 20, 30, 40});
  // Pixel coordinate with align_corners 0: ((g + 1) * 4 - 1) / 2.
  // g = -0.5 -> 0.5 (rounds to 0), 0.25 -> 2, 3.0 -> 7.5 (far right), -3 -> -4.5 (far left).
  Tensor grid = Tensor::FromVector<float>({1, 4, 1}, {-0.5f, 0.25f, 3.0f, -3.0f});
  Tensor border = RunOk(
      &GridSample,
      Spec("GridSample", 20,
           {Attribute::String("mode", "nearest"), Attribute::String("padding_mode", "border")}),
      {x, grid});
  EXPECT_TRUE(TensorsNear(border, Tensor::FromVector<float>({1, 1, 4}, {10, 30, 40, 10})));
  Tensor zeros =
      RunOk(&GridSample, Spec("GridSample", 20, {Attribute::String("mode", "nearest")}), {x, grid});
  EXPECT_TRUE(TensorsNear(zeros, Tensor::FromVector<float>({1, 1, 4}, {10, 30, 0, 0})));
  // Reflection in [-0.5, 3.5]: 7.5 mirrors to -0.5 (neighbours -1 and 0 both read pixel 0);
  // -4.5 mirrors to 3.5 (neighbours 3 and 4 both read pixel 3).
  Tensor reflection = RunOk(
      &GridSample,
      Spec("GridSample", 20,
           {Attribute::String("mode", "linear"), Attribute::String("padding_mode", "reflection")}),
      {x, grid});
  EXPECT_NEAR(reflection.data<float>()[2], 10, 1e-5);
  EXPECT_NEAR(reflection.data<float>()[3], 40, 1e-5);
}

// NaN reads 0; huge and infinite coordinates behave as far outside (no undefined integer
// conversion): 0 with zeros padding, the edge pixel with border, a mirrored pixel with
// reflection.
TEST(SamplingTest, GridSampleNonFiniteAndHugeCoordinates) {
  Tensor x = Tensor::FromVector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const float inf = std::numeric_limits<float>::infinity();
  Tensor grid = Tensor::FromVector<float>({1, 1, 3, 2}, {std::nanf(""), 0, 1e30f, 1e30f, -inf, 0});
  for (const char* padding : {"zeros", "border", "reflection"}) {
    for (const char* mode : {"linear", "nearest", "cubic"}) {
      SCOPED_TRACE(std::string(padding) + " " + mode);
      Tensor y =
          RunOk(&GridSample,
                Spec("GridSample", 20,
                     {Attribute::String("mode", mode), Attribute::String("padding_mode", padding)}),
                {x, grid});
      ASSERT_EQ(y.num_elements(), 3);
      EXPECT_EQ(y.data<float>()[0], 0);
      for (int i = 1; i < 3; ++i) EXPECT_TRUE(std::isfinite(y.data<float>()[i]));
      if (std::string(padding) == "zeros") EXPECT_EQ(y.data<float>()[1], 0);
      if (std::string(padding) == "border" && std::string(mode) == "nearest") {
        EXPECT_EQ(y.data<float>()[1], 4);  // bottom-right corner
      }
    }
  }
}

TEST(SamplingTest, RoiAlignMaxAndAdaptiveSampling) {
  // A 1x1x4x4 ramp; one region covering pixels [0, 4) x [0, 4) without the half-pixel shift.
  std::vector<float> ramp;
  for (int i = 0; i < 16; ++i) ramp.push_back(static_cast<float>(i));
  Tensor x = Tensor::FromVector<float>({1, 1, 4, 4}, ramp);
  Tensor rois = Tensor::FromVector<float>({1, 4}, {0, 0, 3, 3});
  Tensor batch = Tensor::FromVector<int64_t>({1}, {0});
  Tensor avg = RunOk(&RoiAlign,
                     Spec("RoiAlign", 16,
                          {Attribute::String("coordinate_transformation_mode", "output_half_pixel"),
                           Attribute::Int("output_height", 1), Attribute::Int("output_width", 1)}),
                     {x, rois, batch});
  // Adaptive grid 3x3 at 0.5, 1.5, 2.5 on each axis: the mean of a linear ramp at the center.
  EXPECT_NEAR(avg.data<float>()[0], 1.5 * 4 + 1.5, 1e-5);
  Tensor max =
      RunOk(&RoiAlign, Spec("RoiAlign", 10, {Attribute::String("mode", "max")}), {x, rois, batch});
  EXPECT_EQ(max.sizes(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_GT(max.data<float>()[0], 0);
}

TEST(SamplingTest, BadInputsAreErrorsNamingTheNode) {
  auto roi =
      RunNode(&RoiAlign, Spec("RoiAlign", 16),
              {RandomFloats({2, 1, 4, 4}, 1), Tensor::FromVector<float>({1, 4}, {0, 0, 1, 1}),
               Tensor::FromVector<int64_t>({1}, {2})});
  ASSERT_FALSE(roi.ok());
  EXPECT_EQ(roi.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(roi.status().message().find("RoiAlign '"), std::string::npos);
  EXPECT_NE(roi.status().message().find("batch_indices[0] = 2"), std::string::npos)
      << roi.status().ToString();

  auto grid = RunNode(&GridSample, Spec("GridSample", 16),
                      {RandomFloats({1, 1, 4, 4}, 1), RandomFloats({1, 3, 3, 3}, 2)});
  ASSERT_FALSE(grid.ok());
  EXPECT_NE(grid.status().message().find("GridSample '"), std::string::npos);

  auto mode = RunNode(&GridSample, Spec("GridSample", 16, {Attribute::String("mode", "area")}),
                      {RandomFloats({1, 1, 4, 4}, 1), RandomFloats({1, 3, 3, 2}, 2)});
  ASSERT_FALSE(mode.ok());
  EXPECT_NE(mode.status().message().find("mode 'area'"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime::reference
