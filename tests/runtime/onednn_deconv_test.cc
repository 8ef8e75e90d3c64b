// oneDNN 2-D ConvTranspose against the reference tier: channel and geometry sweeps
// (strides, dilations, pads, output_padding, output_shape, auto_pad), groups and
// depthwise, both input layouts, and the variants the fast path must leave alone.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"
#include "runtime/window_case.h"

namespace qtune::runtime::kernel_testing {
namespace {

// The deconvolution tests' default input is 5x6.
WindowShape DeconvShape() {
  WindowShape s;
  s.h = 5;
  s.w = 6;
  return s;
}

KernelCase MakeDeconvCase(const WindowShape& s, std::mt19937& rng, uint32_t seed) {
  return MakeWindowCase(s, "ConvTranspose", &CreateOnednnDeconvKernel, rng, seed);
}

TEST(OnednnDeconv, ChannelSweep) {
  uint32_t seed = TestSeed(2001);
  std::mt19937 rng(seed);
  for (int64_t c_in : {1, 3, 5, 16, 17, 33}) {
    for (int64_t c_out : {1, 3, 5, 16, 17, 33}) {
      WindowShape s = DeconvShape();
      s.n = Pick(rng, {1, 2});
      s.c_in = c_in;
      s.c_out = c_out;
      int64_t k = Pick(rng, {1, 2, 3, 4, 5});
      s.kernel = {k, k};
      s.strides = {Pick(rng, {1, 2}), Pick(rng, {1, 2, 3})};
      s.h = Pick(rng, {1, 2, 3, 5, 7});
      s.w = Pick(rng, {1, 3, 5, 7});
      s.bias = rng() % 2 == 0;
      s.layout = rng() % 2 == 0 ? Layout::kNhwc : Layout::kPlain;
      EXPECT_TRUE(CheckKernel(MakeDeconvCase(s, rng, seed)));
    }
  }
}

TEST(OnednnDeconv, StridesPadsAndOutputPadding) {
  uint32_t seed = TestSeed(2002);
  std::mt19937 rng(seed);
  for (int64_t k : {1, 2, 3, 4, 5}) {
    for (int64_t stride : {1, 2, 3}) {
      for (int64_t dilation : {1, 2}) {
        // output_padding must stay below the stride; pads_end >= it keeps oneDNN's right
        // padding non-negative.
        int64_t op = stride > 1 ? 1 : 0;
        for (const std::vector<int64_t>& pads :
             std::vector<std::vector<int64_t>>{{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 2, 1}}) {
          WindowShape s = DeconvShape();
          s.c_in = Pick(rng, {3, 16, 17});
          s.c_out = Pick(rng, {1, 5, 17});
          s.kernel = {k, k};
          s.strides = {stride, stride};
          s.dilations = {dilation, dilation};
          s.pads = pads;
          if (op > 0 && pads[2] >= op && pads[3] >= op) s.output_padding = {op, op};
          s.layout = rng() % 2 == 0 ? Layout::kNhwc : Layout::kPlain;
          EXPECT_TRUE(CheckKernel(MakeDeconvCase(s, rng, seed)));
        }
      }
    }
  }
}

TEST(OnednnDeconv, OutputShapeAndAutoPad) {
  uint32_t seed = TestSeed(2003);
  std::mt19937 rng(seed);
  for (int64_t k : {2, 3, 4}) {
    for (int64_t stride : {1, 2}) {
      WindowShape s = DeconvShape();
      s.c_in = 5;
      s.c_out = 7;
      s.kernel = {k, k};
      s.strides = {stride, stride};
      // Natural size minus 1, so the derived pads are odd and uneven.
      s.output_shape = {stride * (s.h - 1) + k - 1, stride * (s.w - 1) + k - 1};
      EXPECT_TRUE(CheckKernel(MakeDeconvCase(s, rng, seed)));
      s.output_shape = {};
      for (const char* auto_pad : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
        s.auto_pad = auto_pad;
        EXPECT_TRUE(CheckKernel(MakeDeconvCase(s, rng, seed)));
      }
    }
  }
}

TEST(OnednnDeconv, GroupedAndDepthwise) {
  uint32_t seed = TestSeed(2004);
  std::mt19937 rng(seed);
  const std::vector<std::array<int64_t, 3>> configs = {
      {3, 3, 3}, {16, 16, 16}, {17, 17, 17}, {4, 8, 4}, {6, 9, 3}, {4, 2, 2}, {34, 17, 17}};
  for (const auto& [c_in, c_out, group] : configs) {
    for (int64_t stride : {1, 2}) {
      WindowShape s = DeconvShape();
      s.c_in = c_in;
      s.c_out = c_out;
      s.group = group;
      s.strides = {stride, stride};
      s.pads = {1, 1, 1, 1};
      if (stride == 2) s.output_padding = {1, 1};
      s.layout = stride == 1 ? Layout::kNhwc : Layout::kPlain;
      EXPECT_TRUE(CheckKernel(MakeDeconvCase(s, rng, seed)));
    }
  }
}

TEST(OnednnDeconv, LeavesUnsupportedVariantsToTheReference) {
  uint32_t seed = TestSeed(2005);
  std::mt19937 rng(seed);
  WindowShape negative_right_pad = DeconvShape();  // output_padding beyond pads_end
  negative_right_pad.strides = {2, 2};
  negative_right_pad.output_padding = {1, 1};
  KernelCase c = MakeDeconvCase(negative_right_pad, rng, seed);
  c.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(c));

  KernelCase rank3;
  rank3.factory = &CreateOnednnDeconvKernel;
  rank3.op_type = "ConvTranspose";
  rank3.seed = seed;
  rank3.label = "rank-3 ConvTranspose1D";  // oneDNN, plain layout (onednn_window_nd_test.cc)
  rank3.expect = Expect::kFastPath;
  rank3.inputs = {Dynamic(RandomTensor({1, 3, 9}, rng)), Constant(RandomTensor({3, 4, 3}, rng))};
  EXPECT_TRUE(CheckKernel(rank3));

  KernelCase dynamic_weights = MakeDeconvCase(DeconvShape(), rng, seed);
  dynamic_weights.label = "weights computed at run time";
  dynamic_weights.inputs[1].constant = false;
  dynamic_weights.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(dynamic_weights));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
