// The Winograd F(4x4, 3x3) and F(2x2, 3x3) convolution (onednn_winograd_conv.cc; m = 4 up
// to 36 * C * K floats of transformed weights in 1 MiB, e.g. 64 -> 96 channels, m = 2
// beyond) against the reference tier: random channel counts, odd image sizes (partial
// tiles at the edges), explicit and SAME pads, bias or none, FusedConv with Relu and a
// residual sum (also in place), batches of 2, ResNet-sized layers whose tiles split into
// several chunks with a shorter last one, at 1 and 2 threads; and the convolutions it
// leaves to oneDNN's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

struct Conv3x3 {
  int64_t n = 1, c_in = 64, c_out = 64, height = 14, width = 14, kernel = 3, stride = 1,
          dilation = 1, group = 1;
  std::vector<int64_t> pads = {1, 1, 1, 1};  // empty: auto_pad
  std::string auto_pad, activation;
  bool fused = false;  // a FusedConv (activation may still be empty)
  bool bias = true, sum = false, in_place = false;
};

std::string Describe(const Conv3x3& s) {
  std::string d = "N" + std::to_string(s.n) + " C" + std::to_string(s.c_in) + " K" +
                  std::to_string(s.c_out) + " " + std::to_string(s.height) + "x" +
                  std::to_string(s.width) + " k" + std::to_string(s.kernel) + " s" +
                  std::to_string(s.stride) + " d" + std::to_string(s.dilation) + " g" +
                  std::to_string(s.group);
  d += s.pads.empty() ? " " + s.auto_pad : " pads" + SizesString(s.pads);
  if (!s.activation.empty()) d += " " + s.activation;
  if (s.sum) d += s.in_place ? " sum in place" : " sum";
  return d + (s.bias ? " bias" : "");
}

KernelCase MakeCase(const Conv3x3& s, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnWinogradConvKernel;
  const bool fused = s.fused || s.sum || !s.activation.empty();
  c.op_type = fused ? "FusedConv" : "Conv";
  if (fused) c.domain = kQtuneDomain;
  c.seed = seed;
  c.label = Describe(s);
  c.attributes = {Attribute::Ints("kernel_shape", {s.kernel, s.kernel}),
                  Attribute::Ints("strides", {s.stride, s.stride}),
                  Attribute::Ints("dilations", {s.dilation, s.dilation}),
                  Attribute::Int("group", s.group)};
  if (s.pads.empty()) {
    c.attributes.push_back(Attribute::String("auto_pad", s.auto_pad));
  } else {
    c.attributes.push_back(Attribute::Ints("pads", s.pads));
  }
  if (!s.activation.empty()) c.attributes.push_back(Attribute::String("activation", s.activation));
  c.inputs = {Dynamic(RandomTensor({s.n, s.c_in, s.height, s.width}, rng)),
              Constant(RandomTensor({s.c_out, s.c_in / s.group, s.kernel, s.kernel}, rng))};
  c.inputs.push_back(s.bias ? Constant(RandomTensor({s.c_out}, rng)) : Omitted());
  if (s.sum) {
    c.inputs.push_back(Dynamic(RandomTensor({s.n, s.c_out, s.height, s.width}, rng)));
    if (s.in_place) c.in_place_input = static_cast<int>(kFusedConvSumInput);
  }
  return c;
}

TEST(OnednnWinogradConv, RandomGeometriesMatchTheReference) {
  uint32_t seed = TestSeed(4401);
  AtOneAndTwoThreads([&] {
    std::mt19937 rng(seed);
    for (int i = 0; i < 24; ++i) {
      Conv3x3 s;
      s.n = Pick(rng, {1, 2});
      s.c_in = Pick(rng, {64, 80, 128});
      s.c_out = Pick(rng, {64, 96, 128});
      s.height = Pick(rng, {12, 13, 17, 28});
      s.width = Pick(rng, {12, 15, 31});
      s.bias = rng() % 2 == 0;
      s.fused = rng() % 2 == 0;
      if (s.fused) {
        s.activation = rng() % 2 == 0 ? "Relu" : "";
        s.sum = rng() % 2 == 0;
        s.in_place = s.sum && rng() % 2 == 0;
      }
      if (i % 4 == 3) {
        s.pads.clear();
        s.auto_pad = i % 8 == 3 ? "SAME_UPPER" : "SAME_LOWER";
      }
      KernelCase c = MakeCase(s, rng, seed);
      EXPECT_TRUE(CheckKernel(c));
    }
  });
}

// ResNet-18's layer1 (m = 4) and layer2 (m = 2) blocks: many chunks of tiles and a
// shorter last one, the second convolution of a block adding the identity in place before
// its Relu.
TEST(OnednnWinogradConv, ResNetLayersInChunks) {
  uint32_t seed = TestSeed(4402);
  AtOneAndTwoThreads([&] {
    std::mt19937 rng(seed);
    for (int64_t channels : {64, 128}) {
      Conv3x3 s;
      s.c_in = s.c_out = channels;
      s.height = s.width = channels == 64 ? 56 : 28;
      s.activation = "Relu";
      s.sum = s.in_place = true;
      KernelCase c = MakeCase(s, rng, seed);
      EXPECT_TRUE(CheckKernel(c));
    }
  });
}

TEST(OnednnWinogradConv, LeavesOtherConvolutionsToOnednn) {
  uint32_t seed = TestSeed(4403);
  std::mt19937 rng(seed);
  std::vector<Conv3x3> declined(10);
  declined[0].stride = 2;
  declined[1].kernel = 5;
  declined[1].pads = {2, 2, 2, 2};
  declined[2].dilation = 2;
  declined[2].pads = {2, 2, 2, 2};
  declined[3].group = 2;
  declined[4].c_in = 72;                       // not a multiple of 16
  declined[5].c_out = 272;                     // transformed weights of 1.06 MiB
  declined[6].height = declined[6].width = 8;  // 16 tiles
  declined[7].pads = {0, 0, 0, 0};
  declined[8].activation = "Sigmoid";
  declined[9].c_in = declined[9].c_out = 32;  // too few channels
  for (const Conv3x3& s : declined) {
    KernelCase c = MakeCase(s, rng, seed);
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c));
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
