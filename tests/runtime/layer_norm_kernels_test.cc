// LayerNormalization on its two fast kernels against the reference tier: the native AVX-512
// one (native_layer_norm.cc; on CPUs without AVX-512F it must decline) and oneDNN's
// (onednn_softmax_norm.cc, what those CPUs run). Rows shorter than, equal to and longer
// than 16 and 32 lanes with tails, one and several normalized axes, with and without B,
// constant and run-time Scale, in place, at 1 and 2 threads; rows far from zero (native);
// and what the native kernel leaves to the others.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/kernel_test_util.h"
#include "runtime/kernels/avx512_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

std::vector<NamedFactory> Factories() {
  return {{"native", &CreateNativeLayerNormKernel, CpuHasAvx512F()},
          {"onednn", &CreateOnednnLayerNormKernel, true}};
}

KernelCase LayerNormCase(const NamedFactory& f, Tensor x, int64_t axis, Tensor scale,
                         std::optional<Tensor> bias, bool constant_scale, uint32_t seed) {
  KernelCase c;
  c.factory = f.create;
  c.op_type = "LayerNormalization";
  c.opset = 17;
  c.seed = seed;
  c.expect = f.applies ? Expect::kFastPath : Expect::kNotApplicable;
  c.attributes = {ir::Attribute::Int("axis", axis), ir::Attribute::Float("epsilon", 1e-5f)};
  c.label = std::string(f.name) + " LayerNormalization " + SizesString(x.sizes()) + " axis " +
            std::to_string(axis) + (bias ? " with B" : " no B") +
            (constant_scale ? " constant Scale" : " run-time Scale");
  c.inputs = {Dynamic(std::move(x)), constant_scale ? Constant(scale) : Dynamic(scale)};
  if (bias) c.inputs.push_back(Constant(*bias));
  c.tolerance = 1e-5;
  return c;
}

TEST(LayerNormKernels, MatchReferenceOverRowLengthsAxesAndParameters) {
  const uint32_t seed = TestSeed(4301);
  std::mt19937 rng(seed);
  AtOneAndTwoThreads([&] {
    for (const NamedFactory& f : Factories()) {
      for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{3, 1},
                                                {4, 7},
                                                {2, 5, 16},
                                                {3, 31},
                                                {2, 32},
                                                {5, 33},
                                                {1, 197, 192},
                                                {2, 3, 7, 5},
                                                {1, 768}}) {
        for (int64_t axis : {int64_t{-1}, int64_t{1}}) {
          if (axis == 1 && sizes.size() < 3) continue;
          // Scale and B have the normalized axes' sizes.
          const std::vector<int64_t> row(sizes.begin() + (axis < 0 ? sizes.size() - 1 : axis),
                                         sizes.end());
          Tensor x = RandomTensor(sizes, rng, -3.0f, 3.0f);
          Tensor scale = RandomTensor(row, rng, 0.5f, 2.0f);
          Tensor bias = RandomTensor(row, rng, -1.0f, 1.0f);
          EXPECT_TRUE(CheckKernel(LayerNormCase(f, x, axis, scale, bias, true, seed)));
          EXPECT_TRUE(CheckKernel(LayerNormCase(f, x, axis, scale, std::nullopt, false, seed)));
        }
      }
    }
  });
}

TEST(NativeLayerNorm, RowsFarFromZero) {
  const uint32_t seed = TestSeed(4302);
  std::mt19937 rng(seed);
  // Values around 1000 with a spread of 0.02: a plain running sum of the row in float
  // moves the mean by several % of the spread (oneDNN 2.6's kernel is 0.03 off here).
  Tensor x = RandomTensor({6, 100}, rng, 999.99f, 1000.01f);
  KernelCase c = LayerNormCase(Factories()[0], x, -1, RandomTensor({100}, rng, 0.5f, 2.0f),
                               RandomTensor({100}, rng), true, seed);
  c.tolerance = 2e-3;  // x - mean rounds at 6e-5 (float at 1000): 1% of the spread
  EXPECT_TRUE(CheckKernel(c));
}

TEST(LayerNormKernels, InPlace) {
  const uint32_t seed = TestSeed(4304);
  std::mt19937 rng(seed);
  for (const NamedFactory& f : Factories()) {
    KernelCase in_place =
        LayerNormCase(f, RandomTensor({3, 197, 192}, rng), -1, RandomTensor({192}, rng),
                      RandomTensor({192}, rng), true, seed);
    in_place.in_place_input = 0;
    EXPECT_TRUE(CheckKernel(in_place));
  }
}

TEST(NativeLayerNorm, LeavesStatisticsOutputsAndBroadcastScalesToTheOthers) {
  const uint32_t seed = TestSeed(4303);
  std::mt19937 rng(seed);
  const NamedFactory native = Factories()[0];
  KernelCase stats = LayerNormCase(native, RandomTensor({4, 8}, rng), -1, RandomTensor({8}, rng),
                                   std::nullopt, true, seed);
  stats.num_outputs = 3;  // Mean and InvStdDev asked for
  stats.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(stats));
  KernelCase broadcast = LayerNormCase(native, RandomTensor({4, 8}, rng), -1,
                                       RandomTensor({1}, rng), std::nullopt, true, seed);
  broadcast.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(broadcast));
  KernelCase stash = LayerNormCase(native, RandomTensor({4, 8}, rng), -1, RandomTensor({8}, rng),
                                   std::nullopt, true, seed);
  stash.attributes.push_back(ir::Attribute::Int("stash_type", 11));
  stash.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(stash));
}

TEST(NativeLayerNorm, DeclinesAModelWithoutScale) {
  // Scale is required; its absence is the reference tier's to report (the harness's
  // reference run would fail first, so the factory is asked alone).
  ir::GraphBuilder builder(17);
  ir::Value* x = builder.Input("x", DataType::kFloat32, {4, 8});
  ir::OpOptions options;
  options.name = "norm";
  builder.Output(builder.Op("LayerNormalization", {x, nullptr}, {}, options));
  std::unique_ptr<ir::Graph> graph = builder.Build();
  const ValueInfo x_info{DataType::kFloat32, {4, 8}, {}};
  KernelRequest request{*graph->FindNode("norm"), 17,        1,
                        {&x_info, nullptr},       {&x_info}, {Layout::kPlain, Layout::kPlain}};
  auto created = CreateNativeLayerNormKernel(request);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->has_value());
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
