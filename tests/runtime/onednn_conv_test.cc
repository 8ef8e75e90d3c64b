// oneDNN 2-D Conv against the reference tier: channel sweeps over odd sizes, every
// geometry (kernel, stride, dilation, explicit/asymmetric/auto pads), groups and
// depthwise, both input layouts, and the variants the fast path must leave alone.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/kernel_test_util.h"
#include "runtime/window_case.h"

namespace qtune::runtime::kernel_testing {
namespace {

KernelCase MakeConvCase(const WindowShape& s, std::mt19937& rng, uint32_t seed) {
  return MakeWindowCase(s, "Conv", &CreateOnednnConvKernel, rng, seed);
}

// Smallest spatial size from the odd list that still gives an output with these pads.
int64_t PickSpatial(std::mt19937& rng, int64_t effective_kernel, int64_t pad_total) {
  std::vector<int64_t> fits;
  for (int64_t v : {1, 2, 3, 5, 7, 15, 17}) {
    if (v + pad_total >= effective_kernel) fits.push_back(v);
  }
  return fits.empty() ? effective_kernel : Pick(rng, fits);
}

constexpr int64_t kChannels[] = {1, 3, 5, 16, 17, 33};

TEST(OnednnConv, ChannelSweepWithRandomGeometry) {
  uint32_t seed = TestSeed(1001);
  std::mt19937 rng(seed);
  for (int64_t c_in : kChannels) {
    for (int64_t c_out : kChannels) {
      WindowShape s;
      s.n = Pick(rng, {1, 2});
      s.c_in = c_in;
      s.c_out = c_out;
      int64_t k = Pick(rng, {1, 3, 5});
      s.kernel = {k, k};
      s.strides = {Pick(rng, {1, 2}), Pick(rng, {1, 2})};
      s.dilations = {Pick(rng, {1, 2}), Pick(rng, {1, 2})};
      s.pads = {Pick(rng, {0, 1, 2}), Pick(rng, {0, 1}), Pick(rng, {0, 1, 2}), Pick(rng, {0, 2})};
      s.h = PickSpatial(rng, (k - 1) * s.dilations[0] + 1, s.pads[0] + s.pads[2]);
      s.w = PickSpatial(rng, (k - 1) * s.dilations[1] + 1, s.pads[1] + s.pads[3]);
      s.bias = rng() % 2 == 0;
      s.layout = rng() % 2 == 0 ? Layout::kNhwc : Layout::kPlain;
      EXPECT_TRUE(CheckKernel(MakeConvCase(s, rng, seed)));
    }
  }
}

TEST(OnednnConv, GeometrySweep) {
  uint32_t seed = TestSeed(1002);
  std::mt19937 rng(seed);
  const std::vector<std::vector<int64_t>> explicit_pads = {
      {}, {0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 1, 3}, {0, 2, 3, 1}};
  for (int64_t k : {1, 3, 5}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t dilation : {1, 2}) {
        for (size_t p = 0; p < explicit_pads.size() + 3; ++p) {
          WindowShape s;
          s.c_in = Pick(rng, {1, 3, 5, 17});
          s.c_out = Pick(rng, {1, 3, 5, 17});
          s.kernel = {k, k};
          s.strides = {stride, stride};
          s.dilations = {dilation, dilation};
          if (p < explicit_pads.size()) {
            s.pads = explicit_pads[p];
          } else {
            s.auto_pad = std::vector<std::string>{"SAME_UPPER", "SAME_LOWER", "VALID"}[p - 5];
          }
          int64_t effective = (k - 1) * dilation + 1;
          s.h = std::max<int64_t>(effective, Pick(rng, {5, 7, 15}));
          s.w = std::max<int64_t>(effective, Pick(rng, {2, 3, 7, 17}));
          s.layout = p % 2 == 0 ? Layout::kNhwc : Layout::kPlain;
          EXPECT_TRUE(CheckKernel(MakeConvCase(s, rng, seed)));
        }
      }
    }
  }
}

TEST(OnednnConv, NonSquareKernelsStridesAndDilations) {
  uint32_t seed = TestSeed(1003);
  std::mt19937 rng(seed);
  for (const auto& [kernel, strides, dilations] :
       std::vector<std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>>{
           {{1, 3}, {1, 1}, {1, 1}},
           {{3, 1}, {2, 1}, {1, 2}},
           {{5, 3}, {1, 2}, {2, 1}},
           {{1, 5}, {2, 2}, {1, 2}},
           {{3, 5}, {1, 3}, {1, 1}}}) {
    for (const char* auto_pad : {"SAME_UPPER", "SAME_LOWER", ""}) {
      WindowShape s;
      s.n = 2;
      s.c_in = 5;
      s.c_out = 7;
      s.h = 9;
      s.w = 11;
      s.kernel = kernel;
      s.strides = strides;
      s.dilations = dilations;
      s.auto_pad = auto_pad;
      if (s.auto_pad.empty()) s.pads = {1, 0, 0, 2};
      EXPECT_TRUE(CheckKernel(MakeConvCase(s, rng, seed)));
    }
  }
}

TEST(OnednnConv, GroupedAndDepthwise) {
  uint32_t seed = TestSeed(1004);
  std::mt19937 rng(seed);
  // {c_in, c_out, group}: depthwise, depthwise with channel multiplier, grouped.
  const std::vector<std::array<int64_t, 3>> configs = {
      {1, 1, 1}, {3, 3, 3},    {5, 5, 5}, {16, 16, 16}, {17, 17, 17}, {33, 33, 33},
      {3, 6, 3}, {16, 32, 16}, {6, 9, 3}, {4, 2, 2},    {34, 17, 17}, {32, 64, 2}};
  for (const auto& [c_in, c_out, group] : configs) {
    for (int64_t k : {1, 3, 5}) {
      for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
        WindowShape s;
        s.n = Pick(rng, {1, 2});
        s.c_in = c_in;
        s.c_out = c_out;
        s.group = group;
        s.kernel = {k, k};
        s.strides = {Pick(rng, {1, 2}), Pick(rng, {1, 2})};
        s.dilations = {Pick(rng, {1, 2}), 1};
        s.pads = {k / 2, k / 2, k / 2, k / 2};
        s.h = Pick(rng, {7, 15});
        s.w = Pick(rng, {5, 17});
        s.bias = rng() % 2 == 0;
        s.layout = layout;
        EXPECT_TRUE(CheckKernel(MakeConvCase(s, rng, seed)));
      }
    }
  }
}

TEST(OnednnConv, TinyAndLargeSpatialExtents) {
  uint32_t seed = TestSeed(1005);
  std::mt19937 rng(seed);
  for (int64_t hw : {1, 2, 3, 31, 33}) {
    WindowShape s;
    s.c_in = 16;
    s.c_out = 17;
    s.h = hw;
    s.w = hw == 1 ? 33 : hw;
    s.pads = {1, 1, 1, 1};
    EXPECT_TRUE(CheckKernel(MakeConvCase(s, rng, seed)));
    s.kernel = {1, 1};
    s.pads = {};
    EXPECT_TRUE(CheckKernel(MakeConvCase(s, rng, seed)));
  }
}

TEST(OnednnConv, DefaultAttributesInferKernelShape) {
  uint32_t seed = TestSeed(1006);
  std::mt19937 rng(seed);
  KernelCase c;
  c.factory = &CreateOnednnConvKernel;
  c.op_type = "Conv";
  c.seed = seed;
  c.label = "no attributes";
  c.inputs = {Dynamic(RandomTensor({1, 3, 6, 5}, rng), Layout::kNhwc),
              Constant(RandomTensor({4, 3, 3, 2}, rng))};
  EXPECT_TRUE(CheckKernel(c));
}

TEST(OnednnConv, LeavesUnsupportedVariantsToTheReference) {
  uint32_t seed = TestSeed(1007);
  std::mt19937 rng(seed);
  auto base = [&](const std::string& label) {
    KernelCase c;
    c.factory = &CreateOnednnConvKernel;
    c.op_type = "Conv";
    c.seed = seed;
    c.label = label;
    c.expect = Expect::kNotApplicable;
    return c;
  };
  // Rank 3 and 5 run on oneDNN in plain layout (sweeps in onednn_window_nd_test.cc).
  KernelCase rank3 = base("rank-3 Conv1D");
  rank3.inputs = {Dynamic(RandomTensor({1, 3, 9}, rng)), Constant(RandomTensor({4, 3, 3}, rng))};
  rank3.expect = Expect::kFastPath;
  EXPECT_TRUE(CheckKernel(rank3));

  KernelCase rank5 = base("rank-5 Conv3D");
  rank5.inputs = {Dynamic(RandomTensor({1, 2, 4, 4, 4}, rng)),
                  Constant(RandomTensor({3, 2, 3, 3, 3}, rng))};
  rank5.expect = Expect::kFastPath;
  EXPECT_TRUE(CheckKernel(rank5));

  KernelCase dynamic_weights = base("weights computed at run time");
  dynamic_weights.inputs = {Dynamic(RandomTensor({1, 3, 5, 5}, rng), Layout::kNhwc),
                            Dynamic(RandomTensor({4, 3, 3, 3}, rng))};
  EXPECT_TRUE(CheckKernel(dynamic_weights));

  KernelCase dynamic_bias = base("bias computed at run time");
  dynamic_bias.inputs = {Dynamic(RandomTensor({1, 3, 5, 5}, rng), Layout::kNhwc),
                         Constant(RandomTensor({4, 3, 3, 3}, rng)),
                         Dynamic(RandomTensor({4}, rng))};
  EXPECT_TRUE(CheckKernel(dynamic_bias));

  KernelCase not_conv = base("a Relu is not a Conv");
  not_conv.op_type = "Relu";
  not_conv.inputs = {Dynamic(RandomTensor({1, 3, 5, 5}, rng), Layout::kNhwc)};
  EXPECT_TRUE(CheckKernel(not_conv));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
