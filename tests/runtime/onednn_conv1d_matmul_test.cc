// The 1-D convolution as a matrix product (onednn_conv1d_matmul.cc) against the reference
// tier: random geometries (channels, kernel, stride, dilation, explicit and auto pads,
// bias, batch), FusedConv activations, an STFT filter bank whose frames split into several
// bands with a shorter last one, 1 and 2 threads; and the convolutions it leaves to
// oneDNN's convolution kernel.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

struct Conv1d {
  int64_t n = 1, c_in = 64, c_out = 64, length = 40, kernel = 3, stride = 1, dilation = 1;
  std::vector<int64_t> pads;  // empty: absent
  std::string auto_pad, activation;
  int64_t group = 1;
  bool bias = true;
};

std::string Describe(const Conv1d& s) {
  std::string d = "N" + std::to_string(s.n) + " Cin" + std::to_string(s.c_in) + " Cout" +
                  std::to_string(s.c_out) + " L" + std::to_string(s.length) + " k" +
                  std::to_string(s.kernel) + " s" + std::to_string(s.stride) + " d" +
                  std::to_string(s.dilation) + " g" + std::to_string(s.group);
  if (!s.pads.empty()) d += " pads" + SizesString(s.pads);
  if (!s.auto_pad.empty()) d += " " + s.auto_pad;
  if (!s.activation.empty()) d += " " + s.activation;
  return d + (s.bias ? " bias" : "");
}

KernelCase MakeCase(const Conv1d& s, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnConv1dMatMulKernel;
  c.op_type = s.activation.empty() ? "Conv" : "FusedConv";
  if (!s.activation.empty()) c.domain = kQtuneDomain;
  c.seed = seed;
  c.label = Describe(s);
  c.attributes = {Attribute::Ints("kernel_shape", {s.kernel}),
                  Attribute::Ints("strides", {s.stride}),
                  Attribute::Ints("dilations", {s.dilation}), Attribute::Int("group", s.group)};
  if (!s.pads.empty()) c.attributes.push_back(Attribute::Ints("pads", s.pads));
  if (!s.auto_pad.empty()) c.attributes.push_back(Attribute::String("auto_pad", s.auto_pad));
  if (!s.activation.empty()) c.attributes.push_back(Attribute::String("activation", s.activation));
  c.inputs = {Dynamic(RandomTensor({s.n, s.c_in, s.length}, rng)),
              Constant(RandomTensor({s.c_out, s.c_in / s.group, s.kernel}, rng))};
  if (s.bias) c.inputs.push_back(Constant(RandomTensor({s.c_out}, rng)));
  return c;
}

TEST(OnednnConv1dMatMul, RandomGeometriesMatchTheReference) {
  uint32_t seed = TestSeed(3301);
  AtOneAndTwoThreads([&] {
    std::mt19937 rng(seed);
    for (int i = 0; i < 24; ++i) {
      Conv1d s;
      s.n = Pick(rng, {1, 2});
      s.c_in = Pick(rng, {1, 2, 7, 16, 33, 64});
      s.kernel = Pick(rng, {1, 2, 3, 5, 64, 100});
      s.c_out = Pick(rng, {64, 65, 130});
      s.stride = Pick(rng, {1, 2, 5});
      s.dilation = Pick(rng, {1, 2});
      s.length = (s.kernel - 1) * s.dilation + 1 + Pick(rng, {0, 1, 17, 200});
      s.bias = rng() % 2 == 0;
      if (i % 4 == 3) {
        s.auto_pad = std::vector<std::string>{"SAME_UPPER", "SAME_LOWER", "VALID"}[i % 3];
        s.dilation = 1;
      } else {
        s.pads = {Pick(rng, {0, 1, 7}), Pick(rng, {0, 2, 9})};
      }
      KernelCase c = MakeCase(s, rng, seed);
      EXPECT_TRUE(CheckKernel(c));
    }
  });
}

TEST(OnednnConv1dMatMul, FusedConvActivationsRunAsPostOps) {
  uint32_t seed = TestSeed(3302);
  std::mt19937 rng(seed);
  for (const std::string activation : {"Relu", "Sigmoid", "Tanh", "HardSwish"}) {
    Conv1d s;
    s.c_in = 32;
    s.kernel = 4;
    s.c_out = 96;
    s.pads = {1, 2};
    s.activation = activation;
    KernelCase c = MakeCase(s, rng, seed);
    EXPECT_TRUE(CheckKernel(c));
  }
}

// The audio front end's STFT (1 -> 514 channels, kernel 512, hop 160, pads 256) on 3 s of
// 16 kHz audio: 301 frames, several bands of frames and a shorter last one.
TEST(OnednnConv1dMatMul, StftFilterBankInBands) {
  uint32_t seed = TestSeed(3303);
  AtOneAndTwoThreads([&] {
    std::mt19937 rng(seed);
    Conv1d s;
    s.c_in = 1;
    s.c_out = 514;
    s.kernel = 512;
    s.stride = 160;
    s.length = 48000;
    s.pads = {256, 256};
    s.bias = false;
    KernelCase c = MakeCase(s, rng, seed);
    EXPECT_TRUE(CheckKernel(c));
  });
}

TEST(OnednnConv1dMatMul, LeavesNarrowGroupedAndResidualConvolutions) {
  uint32_t seed = TestSeed(3304);
  std::mt19937 rng(seed);
  std::vector<Conv1d> declined(3);
  declined[0].c_out = 63;  // fewer than 64 output channels
  declined[1].c_out = 16;
  declined[2].group = 2;
  for (const Conv1d& s : declined) {
    KernelCase c = MakeCase(s, rng, seed);
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c));
  }
  // A FusedConv adding a residual sum (input 3).
  Conv1d s;
  s.activation = "Relu";
  KernelCase c = MakeCase(s, rng, seed);
  c.inputs.push_back(Dynamic(RandomTensor({1, 64, 38}, rng)));
  c.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(c));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
