// The native depthwise 1-D convolution (native_depthwise_conv1d.cc) against the reference
// tier: random geometries (channels, kernel, stride, dilation, explicit and auto pads,
// bias, batch, lengths shorter than the window so that every frame is an edge frame),
// FusedConv activations, Silero VAD's layers, 1 and 2 threads; and the convolutions it
// leaves to the other kernels.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

struct Depthwise {
  int64_t n = 1, channels = 16, length = 40, kernel = 5, stride = 1, dilation = 1;
  std::vector<int64_t> pads;  // empty: absent
  std::string auto_pad, activation;
  int64_t out_channels = 0;  // 0: `channels` (a channel multiplier otherwise)
  bool bias = true;
};

std::string Describe(const Depthwise& s) {
  std::string d = "N" + std::to_string(s.n) + " C" + std::to_string(s.channels) + " L" +
                  std::to_string(s.length) + " k" + std::to_string(s.kernel) + " s" +
                  std::to_string(s.stride) + " d" + std::to_string(s.dilation);
  if (!s.pads.empty()) d += " pads" + SizesString(s.pads);
  if (!s.auto_pad.empty()) d += " " + s.auto_pad;
  if (!s.activation.empty()) d += " " + s.activation;
  return d + (s.bias ? " bias" : "");
}

KernelCase MakeCase(const Depthwise& s, std::mt19937& rng, uint32_t seed) {
  const int64_t out_channels = s.out_channels > 0 ? s.out_channels : s.channels;
  KernelCase c;
  c.factory = &CreateNativeDepthwiseConv1dKernel;
  c.op_type = s.activation.empty() ? "Conv" : "FusedConv";
  if (!s.activation.empty()) c.domain = kQtuneDomain;
  c.seed = seed;
  c.label = Describe(s);
  c.tolerance = 1e-5;
  c.attributes = {Attribute::Ints("kernel_shape", {s.kernel}),
                  Attribute::Ints("strides", {s.stride}),
                  Attribute::Ints("dilations", {s.dilation}), Attribute::Int("group", s.channels)};
  if (!s.pads.empty()) c.attributes.push_back(Attribute::Ints("pads", s.pads));
  if (!s.auto_pad.empty()) c.attributes.push_back(Attribute::String("auto_pad", s.auto_pad));
  if (!s.activation.empty()) c.attributes.push_back(Attribute::String("activation", s.activation));
  c.inputs = {Dynamic(RandomTensor({s.n, s.channels, s.length}, rng)),
              Constant(RandomTensor({out_channels, 1, s.kernel}, rng))};
  if (s.bias) c.inputs.push_back(Constant(RandomTensor({out_channels}, rng)));
  return c;
}

TEST(NativeDepthwiseConv1d, RandomGeometriesMatchTheReference) {
  uint32_t seed = TestSeed(3401);
  AtOneAndTwoThreads([&] {
    std::mt19937 rng(seed);
    for (int i = 0; i < 40; ++i) {
      Depthwise s;
      s.n = Pick(rng, {1, 2});
      s.channels = Pick(rng, {1, 3, 16, 33, 258});
      s.kernel = Pick(rng, {1, 2, 3, 5, 31});
      s.stride = Pick(rng, {1, 2, 3});
      s.dilation = Pick(rng, {1, 2});
      s.bias = rng() % 2 == 0;
      if (i % 4 == 3) {
        s.auto_pad = std::vector<std::string>{"SAME_UPPER", "SAME_LOWER", "VALID"}[i % 3];
        s.dilation = 1;
      } else {
        s.pads = {Pick(rng, {0, 1, 2, 15}), Pick(rng, {0, 2, 15})};
      }
      // Lengths from shorter than the window (padded: no interior frame) to many vectors.
      const int64_t window = (s.kernel - 1) * s.dilation + 1;
      const int64_t pads = s.pads.empty() ? 0 : s.pads[0] + s.pads[1];
      const int64_t shortest = std::max<int64_t>(1, window - pads);
      s.length = shortest + Pick(rng, {0, 1, 7, 100, 3000});
      if (s.auto_pad == "VALID") s.length = window + Pick(rng, {0, 5, 90});
      EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
    }
  });
}

TEST(NativeDepthwiseConv1d, FusedConvActivations) {
  uint32_t seed = TestSeed(3402);
  std::mt19937 rng(seed);
  for (const std::string activation : {"Relu", "Sigmoid", "Tanh", "HardSwish", "LeakyRelu"}) {
    Depthwise s;
    s.pads = {2, 2};
    s.activation = activation;
    EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
  }
}

// Silero VAD v4's depthwise layers (kernel 5, pads 2): 258 channels over 8 frames, 16
// over 8, 32 over 4 and 2.
TEST(NativeDepthwiseConv1d, SileroVadLayers) {
  uint32_t seed = TestSeed(3403);
  std::mt19937 rng(seed);
  for (const auto& [channels, length] :
       std::vector<std::pair<int64_t, int64_t>>{{258, 8}, {16, 8}, {16, 4}, {32, 4}, {32, 2}}) {
    Depthwise s;
    s.channels = channels;
    s.length = length;
    s.pads = {2, 2};
    s.activation = "Relu";
    EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
  }
}

TEST(NativeDepthwiseConv1d, LeavesOtherConvolutions) {
  uint32_t seed = TestSeed(3404);
  std::mt19937 rng(seed);
  // A channel multiplier (two filters per channel).
  Depthwise multiplier;
  multiplier.out_channels = 2 * multiplier.channels;
  KernelCase c = MakeCase(multiplier, rng, seed);
  c.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(c));
  // An ordinary convolution (group 1).
  KernelCase plain = MakeCase(Depthwise{}, rng, seed);
  plain.attributes[3] = Attribute::Int("group", 1);
  plain.inputs[1] = Constant(RandomTensor({16, 16, 5}, rng));
  plain.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(plain));
  // A FusedConv adding a residual sum (input 3).
  Depthwise residual;
  residual.activation = "Relu";
  residual.pads = {2, 2};
  KernelCase r = MakeCase(residual, rng, seed);
  r.inputs.push_back(Dynamic(RandomTensor({1, 16, 40}, rng)));
  r.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(r));
  // A 2-D depthwise convolution (oneDNN's depthwise kernel serves it).
  KernelCase two_d = MakeCase(Depthwise{}, rng, seed);
  two_d.attributes = {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Int("group", 16)};
  two_d.inputs = {Dynamic(RandomTensor({1, 16, 8, 8}, rng)),
                  Constant(RandomTensor({16, 1, 3, 3}, rng))};
  two_d.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(two_d));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
