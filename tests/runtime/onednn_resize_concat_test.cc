// oneDNN Resize (resampling) and Concat on kNhwc activations against the reference tier:
// nearest asymmetric/floor integer upscaling, (pytorch_)half_pixel linear, scales and
// sizes inputs, Upsample, odd sizes; Concat of 1 to 4 inputs along every axis; and the
// Resize variants whose ONNX semantics oneDNN does not share.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

constexpr int64_t kOddSizes[] = {1, 2, 3, 5, 7, 15, 17, 31, 33};

struct ResizeShape {
  std::vector<int64_t> x = {1, 3, 4, 5};
  std::vector<float> scales;   // used when not empty
  std::vector<int64_t> sizes;  // used otherwise
  std::string mode = "nearest", coordinates = "asymmetric", nearest_mode = "floor";
  std::vector<Attribute> extra;
  int64_t opset = 17;
  Layout layout = Layout::kNhwc;
};

KernelCase MakeResizeCase(const ResizeShape& s, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnResizeKernel;
  c.op_type = "Resize";
  c.opset = s.opset;
  c.seed = seed;
  c.label = SizesString(s.x) + " " + s.mode + " " + s.coordinates +
            (s.mode == "nearest" ? " " + s.nearest_mode : "") + " " + LayoutName(s.layout);
  if (s.scales.empty()) {
    c.label += " sizes " + SizesString(s.sizes);
  } else {
    c.label += " scales";
    for (float v : s.scales) c.label += " " + std::to_string(v);
  }
  c.attributes = {Attribute::String("mode", s.mode),
                  Attribute::String("coordinate_transformation_mode", s.coordinates),
                  Attribute::String("nearest_mode", s.nearest_mode)};
  c.attributes.insert(c.attributes.end(), s.extra.begin(), s.extra.end());
  c.inputs = {Dynamic(RandomTensor(s.x, rng), s.layout), Omitted()};
  if (s.scales.empty()) {
    c.inputs.push_back(Omitted());
    int64_t n = static_cast<int64_t>(s.sizes.size());
    c.inputs.push_back(Constant(Tensor::FromVector<int64_t>({n}, s.sizes)));
  } else {
    int64_t n = static_cast<int64_t>(s.scales.size());
    c.inputs.push_back(Constant(Tensor::FromVector<float>({n}, s.scales)));
  }
  return c;
}

TEST(OnednnResize, NearestAsymmetricFloorIntegerUpscale) {
  uint32_t seed = TestSeed(6001);
  std::mt19937 rng(seed);
  for (int64_t c : kOddSizes) {
    for (const auto& [sh, sw] :
         std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {3, 3}, {2, 3}, {1, 2}}) {
      ResizeShape s;
      s.x = {c % 2 + 1, c, 1 + c % 4, 2 + c % 5};
      s.layout = c % 3 == 0 ? Layout::kPlain : Layout::kNhwc;
      s.scales = {1.0f, 1.0f, static_cast<float>(sh), static_cast<float>(sw)};
      EXPECT_TRUE(CheckKernel(MakeResizeCase(s, rng, seed)));
      s.scales = {};
      s.sizes = {s.x[0], s.x[1], s.x[2] * sh, s.x[3] * sw};
      EXPECT_TRUE(CheckKernel(MakeResizeCase(s, rng, seed)));
    }
  }
}

TEST(OnednnResize, LinearHalfPixel) {
  uint32_t seed = TestSeed(6002);
  std::mt19937 rng(seed);
  for (int64_t c : kOddSizes) {
    for (const std::vector<float>& scales : std::vector<std::vector<float>>{
             {1, 1, 2, 2}, {1, 1, 3, 3}, {1, 1, 2, 0.5f}, {1, 1, 0.5f, 0.5f}}) {
      ResizeShape s;
      s.x = {1, c, 4, 6};
      s.mode = "linear";
      s.coordinates = "half_pixel";
      s.scales = scales;
      s.layout = c % 2 == 0 ? Layout::kPlain : Layout::kNhwc;
      EXPECT_TRUE(CheckKernel(MakeResizeCase(s, rng, seed)));
    }
  }
  // Sizes that are no integer multiple, up and down.
  for (const std::vector<int64_t>& sizes :
       std::vector<std::vector<int64_t>>{{2, 5, 9, 4}, {2, 5, 1, 17}, {2, 5, 7, 33}}) {
    for (const char* coordinates : {"half_pixel", "pytorch_half_pixel"}) {
      ResizeShape s;
      s.x = {2, 5, 5, 7};
      s.mode = "linear";
      s.coordinates = coordinates;
      s.sizes = sizes;
      KernelCase c = MakeResizeCase(s, rng, seed);
      // pytorch_half_pixel maps a length-1 output to 0, not to the centre.
      bool length_one = sizes[2] == 1 || sizes[3] == 1;
      if (std::string(coordinates) == "pytorch_half_pixel" && length_one) {
        c.expect = Expect::kNotApplicable;
      }
      EXPECT_TRUE(CheckKernel(c));
    }
  }
}

TEST(OnednnResize, UpsampleNearest) {
  uint32_t seed = TestSeed(6003);
  std::mt19937 rng(seed);
  for (const std::vector<float>& scales :
       std::vector<std::vector<float>>{{1, 1, 2, 2}, {1, 1, 3, 2}}) {
    KernelCase c;
    c.factory = &CreateOnednnResizeKernel;
    c.op_type = "Upsample";
    c.opset = 9;
    c.seed = seed;
    c.label = "opset 9 nearest";
    c.attributes = {Attribute::String("mode", "nearest")};
    c.inputs = {Dynamic(RandomTensor({1, 17, 3, 5}, rng), Layout::kNhwc),
                Constant(Tensor::FromVector<float>({4}, scales))};
    EXPECT_TRUE(CheckKernel(c));
  }
}

// ONNX computes coordinates from the given scale; oneDNN from the sizes' ratio. Where the
// two differ, or the rounding or coordinate mode is not oneDNN's, the reference runs.
TEST(OnednnResize, LeavesOtherSemanticsToTheReference) {
  uint32_t seed = TestSeed(6004);
  std::mt19937 rng(seed);
  std::vector<ResizeShape> shapes;
  ResizeShape s;
  s.scales = {1, 1, 2, 2};
  s.coordinates = "half_pixel";  // nearest with half_pixel
  shapes.push_back(s);
  s.coordinates = "asymmetric";
  s.nearest_mode = "round_prefer_floor";
  shapes.push_back(s);
  s.nearest_mode = "floor";
  s.scales = {1, 1, 1.5f, 1.5f};  // not an integer upscale
  shapes.push_back(s);
  s.x = {1, 3, 5, 5};
  s.scales = {1, 1, 2.1f, 2.1f};  // floor(5 * 2.1) = 10, yet the coordinates use 2.1
  shapes.push_back(s);
  s.mode = "linear";
  s.coordinates = "half_pixel";
  s.scales = {1, 1, 1.5f, 1.5f};  // 5 -> 7: oneDNN would scale by 7/5
  shapes.push_back(s);
  s.coordinates = "align_corners";
  s.scales = {1, 1, 2, 2};
  shapes.push_back(s);
  s.coordinates = "asymmetric";
  shapes.push_back(s);
  s.mode = "cubic";
  s.coordinates = "half_pixel";
  shapes.push_back(s);
  s.mode = "linear";
  s.x = {1, 3, 4, 3};
  s.scales = {};
  s.sizes = {6, 6};  // keep_aspect_ratio_policy: scale 1.5 both ways, output 6x5
  s.extra = {Attribute::Ints("axes", {2, 3}),
             Attribute::String("keep_aspect_ratio_policy", "not_larger")};
  s.opset = 18;
  shapes.push_back(s);
  for (const ResizeShape& shape : shapes) {
    KernelCase c = MakeResizeCase(shape, rng, seed);
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c));
  }

  KernelCase rank3;
  rank3.factory = &CreateOnednnResizeKernel;
  rank3.op_type = "Resize";
  rank3.seed = seed;
  rank3.label = "rank 3";
  rank3.attributes = {Attribute::String("coordinate_transformation_mode", "asymmetric"),
                      Attribute::String("nearest_mode", "floor")};
  rank3.inputs = {Dynamic(RandomTensor({1, 3, 4}, rng)), Omitted(),
                  Constant(Tensor::FromVector<float>({3}, {1, 1, 2}))};
  rank3.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(rank3));
}

KernelCase MakeConcatCase(const std::vector<std::vector<int64_t>>& inputs, int64_t axis,
                          Layout layout, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnConcatKernel;
  c.op_type = "Concat";
  c.seed = seed;
  c.attributes = {Attribute::Int("axis", axis)};
  c.label = "axis " + std::to_string(axis) + " " + LayoutName(layout) + ":";
  for (const std::vector<int64_t>& sizes : inputs) {
    c.label += " " + SizesString(sizes);
    c.inputs.push_back(Dynamic(RandomTensor(sizes, rng), layout));
  }
  return c;
}

TEST(OnednnConcat, ChannelsOfTwoToFourInputs) {
  uint32_t seed = TestSeed(6101);
  std::mt19937 rng(seed);
  for (size_t count : {2, 3, 4}) {
    for (int trial = 0; trial < 6; ++trial) {
      int64_t n = trial % 2 + 1, h = kOddSizes[rng() % 9], w = kOddSizes[rng() % 7];
      std::vector<std::vector<int64_t>> inputs;
      for (size_t i = 0; i < count; ++i) inputs.push_back({n, kOddSizes[rng() % 9], h, w});
      for (int64_t axis : {1, -3}) {
        for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
          EXPECT_TRUE(CheckKernel(MakeConcatCase(inputs, axis, layout, rng, seed)));
        }
      }
    }
  }
}

TEST(OnednnConcat, OtherAxesAndASingleInput) {
  uint32_t seed = TestSeed(6102);
  std::mt19937 rng(seed);
  EXPECT_TRUE(CheckKernel(
      MakeConcatCase({{1, 3, 5, 7}, {2, 3, 5, 7}, {3, 3, 5, 7}}, 0, Layout::kNhwc, rng, seed)));
  EXPECT_TRUE(
      CheckKernel(MakeConcatCase({{2, 17, 1, 7}, {2, 17, 3, 7}}, 2, Layout::kNhwc, rng, seed)));
  EXPECT_TRUE(
      CheckKernel(MakeConcatCase({{2, 5, 3, 2}, {2, 5, 3, 15}}, -1, Layout::kNhwc, rng, seed)));
  EXPECT_TRUE(CheckKernel(MakeConcatCase({{1, 33, 3, 5}}, 1, Layout::kNhwc, rng, seed)));
}

TEST(OnednnConcat, LeavesOtherOperandsToTheReference) {
  uint32_t seed = TestSeed(6103);
  std::mt19937 rng(seed);
  KernelCase constant = MakeConcatCase({{1, 3, 5, 5}, {1, 2, 5, 5}}, 1, Layout::kNhwc, rng, seed);
  constant.inputs[1].constant = true;
  constant.label += " (second input constant)";
  constant.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(constant));

  KernelCase rank3 = MakeConcatCase({{3, 5, 7}, {3, 2, 7}}, 1, Layout::kPlain, rng, seed);
  rank3.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(rank3));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
