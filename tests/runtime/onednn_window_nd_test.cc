// oneDNN 1-D and 3-D window kernels (Conv, FusedConv, ConvTranspose, MaxPool,
// AveragePool, GlobalAveragePool, GlobalMaxPool on rank-3 and rank-5 activations, plain
// layout) against the reference tier: odd channel and length sweeps, strides, dilations,
// asymmetric and auto pads, groups, and a long strided 1-D filter bank (an STFT).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernel_test_util.h"
#include "runtime/quant_test_tensors.h"

namespace qtune::runtime::kernel_testing {
namespace {

// A window problem with `spatial.size()` (1 or 3) spatial axes.
struct NdShape {
  int64_t n = 1, c_in = 3, c_out = 4, group = 1;
  std::vector<int64_t> spatial, kernel, strides, dilations, pads;  // pads empty: absent
  std::string auto_pad;
  bool bias = true;
};

std::string Describe(const std::string& op, const NdShape& s) {
  std::string d = op + " N" + std::to_string(s.n) + " Cin" + std::to_string(s.c_in) + " Cout" +
                  std::to_string(s.c_out) + " x" + SizesString(s.spatial) + " k" +
                  SizesString(s.kernel) + " s" + SizesString(s.strides) + " d" +
                  SizesString(s.dilations) + " g" + std::to_string(s.group);
  if (!s.pads.empty()) d += " pads" + SizesString(s.pads);
  if (!s.auto_pad.empty()) d += " " + s.auto_pad;
  return d + (s.bias ? " bias" : "");
}

std::vector<int64_t> XSizes(const NdShape& s) {
  std::vector<int64_t> x = {s.n, s.c_in};
  x.insert(x.end(), s.spatial.begin(), s.spatial.end());
  return x;
}

// Conv ([C_out, C_in/g, k...] weights) or ConvTranspose ([C_in, C_out/g, k...]).
KernelCase MakeCase(const std::string& op, const NdShape& s, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = op == "ConvTranspose" ? &CreateOnednnDeconvKernel : &CreateOnednnConvKernel;
  c.op_type = op;
  c.seed = seed;
  c.label = Describe(op, s);
  c.attributes = {Attribute::Ints("kernel_shape", s.kernel), Attribute::Ints("strides", s.strides),
                  Attribute::Ints("dilations", s.dilations), Attribute::Int("group", s.group)};
  if (!s.pads.empty()) c.attributes.push_back(Attribute::Ints("pads", s.pads));
  if (!s.auto_pad.empty()) c.attributes.push_back(Attribute::String("auto_pad", s.auto_pad));
  const bool transposed = op == "ConvTranspose";
  std::vector<int64_t> w = {transposed ? s.c_in : s.c_out,
                            (transposed ? s.c_out : s.c_in) / s.group};
  w.insert(w.end(), s.kernel.begin(), s.kernel.end());
  c.inputs = {Dynamic(RandomTensor(XSizes(s), rng)), Constant(RandomTensor(w, rng))};
  if (s.bias) c.inputs.push_back(Constant(RandomTensor({s.c_out}, rng)));
  return c;
}

// Random geometry with `dims` spatial axes whose output is non-empty.
NdShape RandomShape(std::mt19937& rng, size_t dims, bool transposed) {
  NdShape s;
  s.n = Pick(rng, {1, 2});
  s.c_in = Pick(rng, {1, 3, 5, 16, 17});
  s.c_out = Pick(rng, {1, 3, 5, 16, 17});
  s.bias = rng() % 2 == 0;
  for (size_t i = 0; i < dims; ++i) {
    int64_t k = Pick(rng, {1, 2, 3, 5});
    int64_t d = transposed ? 1 : Pick(rng, {1, 2});
    s.kernel.push_back(k);
    s.strides.push_back(Pick(rng, {1, 2, 3}));
    s.dilations.push_back(d);
    // Longer than the effective kernel: 1-D up to 33 more, 3-D small. (A single input
    // position under a 1x1 kernel has only oneDNN's reference implementation.)
    s.spatial.push_back(
        (k - 1) * d + 1 +
        Pick(rng, dims == 1 ? std::vector<int64_t>{1, 4, 16, 32} : std::vector<int64_t>{1, 3}));
  }
  for (size_t i = 0; i < 2 * dims; ++i) s.pads.push_back(Pick(rng, {0, 1, 2}));
  if (transposed) {
    // Pads must stay below the effective kernel for a non-empty transposed output.
    for (size_t i = 0; i < 2 * dims; ++i) s.pads[i] = std::min(s.pads[i], s.kernel[i % dims] - 1);
  }
  return s;
}

TEST(OnednnWindowNd, ConvRank3And5MatchReference) {
  uint32_t seed = TestSeed(3101);
  std::mt19937 rng(seed);
  for (size_t dims : {1, 3}) {
    for (int i = 0; i < 24; ++i) {
      NdShape s = RandomShape(rng, dims, false);
      if (i % 4 == 3) {
        s.pads.clear();
        s.auto_pad = std::vector<std::string>{"SAME_UPPER", "SAME_LOWER", "VALID"}[i % 3];
        s.dilations.assign(dims, 1);
      }
      EXPECT_TRUE(CheckKernel(MakeCase("Conv", s, rng, seed)));
    }
  }
}

TEST(OnednnWindowNd, GroupedAndDepthwiseConv) {
  uint32_t seed = TestSeed(3102);
  std::mt19937 rng(seed);
  for (size_t dims : {1, 3}) {
    for (int64_t group : {2, 4}) {
      NdShape s = RandomShape(rng, dims, false);
      s.group = group;
      s.c_in = group * Pick(rng, {1, 3});
      s.c_out = group * Pick(rng, {1, 2});
      EXPECT_TRUE(CheckKernel(MakeCase("Conv", s, rng, seed)));
    }
  }
}

// An STFT as a 1-D convolution: 2x33 cosine/sine filters of length 64, hop 16, over a
// 1-channel signal; the case the audio front end runs.
TEST(OnednnWindowNd, StftFilterBankConv1d) {
  uint32_t seed = TestSeed(3103);
  std::mt19937 rng(seed);
  NdShape s;
  s.n = 2;
  s.c_in = 1;
  s.c_out = 66;
  s.spatial = {1000};
  s.kernel = {64};
  s.strides = {16};
  s.dilations = {1};
  s.pads = {32, 32};
  s.bias = false;
  KernelCase c = MakeCase("Conv", s, rng, seed);
  EXPECT_TRUE(CheckKernel(c));
}

// FusedConv with Relu and a residual Sum on rank-3 activations (a 1-D ResNet block).
TEST(OnednnWindowNd, FusedConv1dWithReluAndSum) {
  uint32_t seed = TestSeed(3104);
  std::mt19937 rng(seed);
  KernelCase c;
  c.factory = &CreateOnednnConvKernel;
  c.op_type = "FusedConv";
  c.domain = kQtuneDomain;
  c.seed = seed;
  c.label = "FusedConv 1-D Relu + Sum";
  c.attributes = {Attribute::Ints("kernel_shape", {3}), Attribute::Ints("pads", {1, 1}),
                  Attribute::String("activation", "Relu")};
  c.inputs = {Dynamic(RandomTensor({2, 8, 33}, rng)), Constant(RandomTensor({8, 8, 3}, rng)),
              Constant(RandomTensor({8}, rng)), Dynamic(RandomTensor({2, 8, 33}, rng))};
  EXPECT_TRUE(CheckKernel(c));
}

TEST(OnednnWindowNd, ConvTransposeRank3And5MatchReference) {
  uint32_t seed = TestSeed(3105);
  std::mt19937 rng(seed);
  for (size_t dims : {1, 3}) {
    for (int i = 0; i < 12; ++i) {
      NdShape s = RandomShape(rng, dims, true);
      if (i % 3 == 2) {
        s.group = 2;
        s.c_in = 2 * Pick(rng, {1, 3});
        s.c_out = 2 * Pick(rng, {1, 2});
      }
      EXPECT_TRUE(CheckKernel(MakeCase("ConvTranspose", s, rng, seed)));
    }
  }
}

KernelCase MakePoolCase(const std::string& op, const std::vector<int64_t>& x,
                        const std::vector<Attribute>& attributes, std::mt19937& rng,
                        uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnPoolKernel;
  c.op_type = op;
  c.seed = seed;
  c.label = op + " " + SizesString(x);
  c.attributes = attributes;
  for (const Attribute& a : attributes) c.label += " " + a.name;
  c.inputs = {Dynamic(RandomTensor(x, rng))};
  return c;
}

TEST(OnednnWindowNd, PoolingRank3And5MatchReference) {
  uint32_t seed = TestSeed(3106);
  std::mt19937 rng(seed);
  for (const std::string op : {"MaxPool", "AveragePool"}) {
    EXPECT_TRUE(CheckKernel(
        MakePoolCase(op, {2, 5, 17}, {Attribute::Ints("kernel_shape", {3})}, rng, seed)));
    EXPECT_TRUE(
        CheckKernel(MakePoolCase(op, {1, 17, 33},
                                 {Attribute::Ints("kernel_shape", {4}),
                                  Attribute::Ints("strides", {2}), Attribute::Ints("pads", {1, 2})},
                                 rng, seed)));
    EXPECT_TRUE(
        CheckKernel(MakePoolCase(op, {1, 3, 15},
                                 {Attribute::Ints("kernel_shape", {3}),
                                  Attribute::Ints("strides", {2}), Attribute::Int("ceil_mode", 1)},
                                 rng, seed)));
    EXPECT_TRUE(CheckKernel(MakePoolCase(
        op, {2, 3, 5, 7, 6},
        {Attribute::Ints("kernel_shape", {2, 3, 2}), Attribute::Ints("strides", {1, 2, 2}),
         Attribute::Ints("pads", {0, 1, 1, 1, 0, 0})},
        rng, seed)));
    EXPECT_TRUE(CheckKernel(MakePoolCase(
        op, {1, 4, 7, 7, 7},
        {Attribute::Ints("kernel_shape", {3, 3, 3}), Attribute::String("auto_pad", "SAME_UPPER"),
         Attribute::Ints("strides", {2, 2, 2})},
        rng, seed)));
  }
  KernelCase counted =
      MakePoolCase("AveragePool", {1, 3, 9},
                   {Attribute::Ints("kernel_shape", {3}), Attribute::Ints("pads", {1, 1}),
                    Attribute::Int("count_include_pad", 1)},
                   rng, seed);
  EXPECT_TRUE(CheckKernel(counted));
  for (const std::string op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    EXPECT_TRUE(CheckKernel(MakePoolCase(op, {2, 17, 31}, {}, rng, seed)));
    EXPECT_TRUE(CheckKernel(MakePoolCase(op, {1, 5, 3, 5, 7}, {}, rng, seed)));
  }
}

// uint8/int8 pools (the QDQ fusion's pass-through ops) on rank-3 and rank-5 data: exact.
// oneDNN may have only its reference implementation for int8 in plain layouts, which the
// kernel declines; a kernel it returns must match bit for bit.
TEST(OnednnWindowNd, Int8PoolingRank3And5) {
  uint32_t seed = TestSeed(3108);
  std::mt19937 rng(seed);
  for (DataType dtype : {DataType::kUint8, DataType::kInt8}) {
    for (const std::vector<int64_t>& x :
         {std::vector<int64_t>{2, 17, 33}, std::vector<int64_t>{1, 5, 6, 7, 5}}) {
      const size_t dims = x.size() - 2;
      const std::vector<Attribute> windowed = {
          Attribute::Ints("kernel_shape", std::vector<int64_t>(dims, 3)),
          Attribute::Ints("strides", std::vector<int64_t>(dims, 2)),
          Attribute::Ints("pads", std::vector<int64_t>(2 * dims, 1))};
      for (const std::string op : {"MaxPool", "AveragePool", "GlobalAveragePool"}) {
        KernelCase c = MakePoolCase(
            op, x, op == "GlobalAveragePool" ? std::vector<Attribute>{} : windowed, rng, seed);
        c.inputs = {Dynamic(RandomQuantTensor(dtype, x, rng))};
        c.label += " " + std::string(DataTypeName(dtype));
        c.tolerance = 0;
        c.expect = Expect::kFastPathIfSupported;
        EXPECT_TRUE(CheckKernel(c));
      }
    }
  }
}

TEST(OnednnWindowNd, LeavesDilatedPoolingToTheReference) {
  uint32_t seed = TestSeed(3107);
  std::mt19937 rng(seed);
  KernelCase c = MakePoolCase(
      "MaxPool", {1, 3, 17},
      {Attribute::Ints("kernel_shape", {3}), Attribute::Ints("dilations", {2})}, rng, seed);
  c.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(c));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
