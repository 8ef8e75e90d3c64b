// Resize, Upsample, DepthToSpace, SpaceToDepth: ONNX node tests, hand-computed coordinate and
// rounding cases, separability of (bi/tri)linear and cubic, opset 18 axes and
// keep_aspect_ratio_policy, and error handling.
#include <gtest/gtest.h>

#include "reference_nn_test_util.h"

namespace qtune::runtime::nn {
namespace {

using ir::Attribute;
using testing::CheckOnnxNodeCase;
using testing::RandomFloats;
using testing::RunNode;
using testing::RunOk;
using testing::TensorsNear;

Tensor F32(std::vector<int64_t> sizes, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(sizes), values);
}
Tensor I64(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<int64_t>({n}, values);
}
Tensor Scales(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<float>({n}, values);
}

testing::NodeSpecForTest Spec(std::string op, std::vector<Attribute> attributes = {},
                              int64_t opset = 13) {
  return {.op_type = std::move(op), .attributes = std::move(attributes), .opset = opset};
}

// Resize (opset 13 inputs) by scales or by sizes.
Tensor ResizeScales(const Tensor& x, std::vector<float> scales, std::vector<Attribute> attrs) {
  return RunOk(&Resize, Spec("Resize", std::move(attrs)), {x, Tensor(), Scales(scales)});
}
Tensor ResizeSizes(const Tensor& x, std::vector<int64_t> sizes, std::vector<Attribute> attrs,
                   int64_t opset = 13) {
  return RunOk(&Resize, Spec("Resize", std::move(attrs), opset),
               {x, Tensor(), Tensor(), I64(sizes)});
}

TEST(ResizeTest, OnnxNodeTests) {
  for (const char* name : {"test_resize_downsample_scales_cubic",
                           "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside",
                           "test_resize_downsample_scales_cubic_align_corners",
                           "test_resize_downsample_scales_linear",
                           "test_resize_downsample_scales_linear_align_corners",
                           "test_resize_downsample_scales_nearest",
                           "test_resize_downsample_sizes_cubic",
                           "test_resize_downsample_sizes_linear_pytorch_half_pixel",
                           "test_resize_downsample_sizes_nearest",
                           "test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn",
                           "test_resize_tf_crop_and_resize",
                           "test_resize_upsample_scales_cubic",
                           "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside",
                           "test_resize_upsample_scales_cubic_align_corners",
                           "test_resize_upsample_scales_cubic_asymmetric",
                           "test_resize_upsample_scales_linear",
                           "test_resize_upsample_scales_linear_align_corners",
                           "test_resize_upsample_scales_nearest",
                           "test_resize_upsample_sizes_cubic",
                           "test_resize_upsample_sizes_nearest",
                           "test_resize_upsample_sizes_nearest_ceil_half_pixel",
                           "test_resize_upsample_sizes_nearest_floor_align_corners",
                           "test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &Resize, 1e-5, 1e-5);
  }
  CheckOnnxNodeCase("test_upsample_nearest", &Upsample);
  for (const char* name : {"test_depthtospace_crd_mode", "test_depthtospace_crd_mode_example",
                           "test_depthtospace_dcr_mode", "test_depthtospace_example"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &DepthToSpace);
  }
  for (const char* name : {"test_spacetodepth", "test_spacetodepth_example"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &SpaceToDepth);
  }
}

TEST(ResizeTest, NearestModesRoundTheHalfwayPointAsNamed) {
  // asymmetric, scale 2: output 1 maps to 0.5, output 3 to 1.5.
  Tensor x = F32({4}, {10, 20, 30, 40});
  auto run = [&](const char* mode) {
    return ResizeScales(x, {2},
                        {Attribute::String("coordinate_transformation_mode", "asymmetric"),
                         Attribute::String("nearest_mode", mode)});
  };
  EXPECT_TRUE(TensorsNear(run("round_prefer_floor"), F32({8}, {10, 10, 20, 20, 30, 30, 40, 40})));
  EXPECT_TRUE(TensorsNear(run("floor"), F32({8}, {10, 10, 20, 20, 30, 30, 40, 40})));
  EXPECT_TRUE(TensorsNear(run("round_prefer_ceil"), F32({8}, {10, 20, 20, 30, 30, 40, 40, 40})));
  EXPECT_TRUE(TensorsNear(run("ceil"), F32({8}, {10, 20, 20, 30, 30, 40, 40, 40})));
}

TEST(ResizeTest, LinearCoordinateModesHandComputed) {
  Tensor x = F32({2}, {1, 2});
  // half_pixel: sources -0.25, 0.25, 0.75, 1.25, clamped at the edges.
  EXPECT_TRUE(TensorsNear(ResizeScales(x, {2}, {Attribute::String("mode", "linear")}),
                          F32({4}, {1, 1.25f, 1.75f, 2})));
  EXPECT_TRUE(TensorsNear(
      ResizeSizes(x, {3},
                  {Attribute::String("mode", "linear"),
                   Attribute::String("coordinate_transformation_mode", "align_corners")}),
      F32({3}, {1, 1.5f, 2})));
  EXPECT_TRUE(
      TensorsNear(ResizeScales(x, {2},
                               {Attribute::String("mode", "linear"),
                                Attribute::String("coordinate_transformation_mode", "asymmetric")}),
                  F32({4}, {1, 1.5f, 2, 2})));
  // pytorch_half_pixel with a single output sample reads coordinate 0.
  EXPECT_TRUE(TensorsNear(
      ResizeSizes(x, {1},
                  {Attribute::String("mode", "linear"),
                   Attribute::String("coordinate_transformation_mode", "pytorch_half_pixel")}),
      F32({1}, {1})));
}

TEST(ResizeTest, MultilinearAndCubicAreSeparable) {
  uint32_t seed = 1;
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* coordinates : {"half_pixel", "align_corners", "asymmetric"}) {
      for (std::vector<float> s :
           std::vector<std::vector<float>>{{1, 1, 2, 3}, {1, 1, 0.5f, 1.5f}, {1, 1, 1.7f, 0.6f}}) {
        SCOPED_TRACE(std::string(mode) + " " + coordinates + " seed " + std::to_string(seed));
        Tensor x = RandomFloats({1, 2, 5, 7}, seed++);
        std::vector<Attribute> attrs = {
            Attribute::String("mode", mode),
            Attribute::String("coordinate_transformation_mode", coordinates)};
        Tensor both = ResizeScales(x, s, attrs);
        Tensor rows = ResizeScales(x, {1, 1, s[2], 1}, attrs);
        Tensor then_cols = ResizeScales(rows, {1, 1, 1, s[3]}, attrs);
        EXPECT_TRUE(TensorsNear(both, then_cols, 1e-5, 1e-5));
      }
    }
  }
  // Trilinear on a 5-D tensor.
  Tensor x = RandomFloats({1, 1, 3, 4, 5}, 99);
  std::vector<Attribute> attrs = {Attribute::String("mode", "linear")};
  Tensor all = ResizeScales(x, {1, 1, 2, 1.5f, 0.8f}, attrs);
  Tensor step =
      ResizeScales(ResizeScales(ResizeScales(x, {1, 1, 2, 1, 1}, attrs), {1, 1, 1, 1.5f, 1}, attrs),
                   {1, 1, 1, 1, 0.8f}, attrs);
  EXPECT_TRUE(TensorsNear(all, step, 1e-5, 1e-5));
}

TEST(ResizeTest, Opset10AndUpsampleUseAsymmetricFloorCoordinates) {
  Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor scales = Scales({1, 1, 2, 3});
  Tensor expected =
      F32({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  EXPECT_TRUE(TensorsNear(RunOk(&Resize, Spec("Resize", {}, 10), {x, scales}), expected));
  EXPECT_TRUE(TensorsNear(RunOk(&Upsample, Spec("Upsample", {}, 9), {x, scales}), expected));
  EXPECT_TRUE(TensorsNear(
      RunOk(&Upsample, Spec("Upsample", {Attribute::Floats("scales", {1, 1, 2, 3})}, 7), {x}),
      expected));
  // Linear, asymmetric: row sources 0, 0.5, 1, 1.5 (clamped).
  Tensor linear = RunOk(&Upsample, Spec("Upsample", {Attribute::String("mode", "linear")}, 9),
                        {x, Scales({1, 1, 2, 1})});
  EXPECT_TRUE(TensorsNear(linear, F32({1, 1, 4, 2}, {1, 2, 2, 3, 3, 4, 3, 4})));
  // Resize-10 downsampling rounds up (the ONNX Resize-10 example): [1 2 3 4] * 0.6 -> [1 3].
  Tensor down = RunOk(&Resize, Spec("Resize", {}, 10),
                      {F32({1, 1, 1, 4}, {1, 2, 3, 4}), Scales({1, 1, 1, 0.6f})});
  EXPECT_TRUE(TensorsNear(down, F32({1, 1, 1, 2}, {1, 3})));
}

TEST(ResizeTest, AxesAndKeepAspectRatioPolicy) {
  Tensor x = RandomFloats({1, 2, 4, 6}, 7);
  std::vector<Attribute> linear = {Attribute::String("mode", "linear")};
  Tensor full = ResizeScales(x, {1, 1, 0.5f, 2}, linear);
  std::vector<Attribute> with_axes = linear;
  with_axes.push_back(Attribute::Ints("axes", {-1, 2}));
  Tensor by_axes = RunOk(&Resize, Spec("Resize", with_axes, 18), {x, Tensor(), Scales({2, 0.5f})});
  EXPECT_TRUE(TensorsNear(by_axes, full));
  auto policy = [&](const char* name) {
    return ResizeSizes(
        x, {2, 2},
        {Attribute::Ints("axes", {2, 3}), Attribute::String("keep_aspect_ratio_policy", name)}, 18);
  };
  // Scales 2/4 and 2/6: not_larger takes 1/3 -> round(4/3), 2; not_smaller 1/2 -> 2, 3.
  EXPECT_EQ(policy("not_larger").sizes(), (std::vector<int64_t>{1, 2, 1, 2}));
  EXPECT_EQ(policy("not_smaller").sizes(), (std::vector<int64_t>{1, 2, 2, 3}));
  EXPECT_EQ(policy("stretch").sizes(), (std::vector<int64_t>{1, 2, 2, 2}));
}

TEST(ResizeTest, TfCropAndResizeExtrapolatesOutsideTheInput) {
  Tensor x = F32({1, 3}, {1, 2, 3});
  Tensor roi = F32({4}, {0, 0.5f, 1, 1.5f});
  Tensor y = RunOk(
      &Resize,
      Spec("Resize", {Attribute::String("mode", "linear"),
                      Attribute::String("coordinate_transformation_mode", "tf_crop_and_resize"),
                      Attribute::Float("extrapolation_value", -7)}),
      {x, roi, Tensor(), I64({1, 3})});
  // Column sources: 0.5 * 2 + x * (1.5 - 0.5) * 2 / 2 = 1, 2, 3 -> 2, 3, outside.
  EXPECT_TRUE(TensorsNear(y, F32({1, 3}, {2, 3, -7})));
}

TEST(ResizeTest, IntegersResizeInNearestModeOnly) {
  Tensor x = Tensor::FromVector<uint8_t>({1, 2}, {7, 250});
  Tensor y = RunOk(&Resize, Spec("Resize"), {x, Tensor(), Tensor(), I64({1, 4})});
  EXPECT_TRUE(TensorsNear(y, Tensor::FromVector<uint8_t>({1, 4}, {7, 7, 250, 250})));
  KernelResult linear = RunNode(&Resize, Spec("Resize", {Attribute::String("mode", "linear")}),
                                {x, Tensor(), Tensor(), I64({1, 4})});
  EXPECT_EQ(linear.status().code(), StatusCode::kUnimplemented);
}

TEST(ResizeTest, BadInputsNameTheNode) {
  Tensor x = RandomFloats({1, 1, 2, 2}, 3);
  auto code = [&](std::vector<Tensor> inputs, std::vector<Attribute> attrs = {}) {
    KernelResult r = RunNode(&Resize, Spec("Resize", std::move(attrs), 18), inputs);
    EXPECT_NE(r.status().message().find("Resize 'node'"), std::string::npos)
        << r.status().ToString();
    return r.status().code();
  };
  EXPECT_EQ(code({x, Tensor(), Scales({1, 1, 2, 2}), I64({1, 1, 4, 4})}),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code({x}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({x, Tensor(), Scales({2, 2})}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({x, Tensor(), Scales({1, 1, 0, 2})}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({x, Tensor(), Scales({1, 1, 2, 2})}, {Attribute::String("mode", "area")}),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code({x, Tensor(), Scales({1, 1, 0.5f, 0.5f})},
                 {Attribute::String("mode", "linear"), Attribute::Int("antialias", 1)}),
            StatusCode::kUnimplemented);
}

TEST(DepthSpaceTest, SpaceToDepthInvertsDepthToSpaceDcr) {
  for (int64_t b : {1, 2, 3}) {
    Tensor x = RandomFloats({2, 2 * b * b, 3, 5}, static_cast<uint32_t>(b));
    Tensor space =
        RunOk(&DepthToSpace, Spec("DepthToSpace", {Attribute::Int("blocksize", b)}), {x});
    EXPECT_EQ(space.sizes(), (std::vector<int64_t>{2, 2, 3 * b, 5 * b}));
    Tensor back =
        RunOk(&SpaceToDepth, Spec("SpaceToDepth", {Attribute::Int("blocksize", b)}), {space});
    EXPECT_TRUE(TensorsNear(back, x, 0, 0));
  }
  KernelResult bad = RunNode(&DepthToSpace, Spec("DepthToSpace", {Attribute::Int("blocksize", 2)}),
                             {RandomFloats({1, 3, 2, 2}, 1)});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qtune::runtime::nn
