// Native float32 BatchNormalization against the reference tier: channel counts below, at
// and above a vector width (1, 3, 7, 17, 33), odd spatial sizes, ranks 2 to 5, both
// layouts, constant (folded at creation) and run-time parameters, in place; and the cases
// it leaves to the reference tier.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

struct Params {
  Tensor scale, bias, mean, var;
};

Params RandomParams(int64_t channels, std::mt19937& rng) {
  return {RandomTensor({channels}, rng, -2.0f, 2.0f), RandomTensor({channels}, rng, -1.0f, 1.0f),
          RandomTensor({channels}, rng, -0.5f, 0.5f), RandomTensor({channels}, rng, 0.1f, 3.0f)};
}

KernelCase BatchNormCase(Tensor x, Layout layout, const Params& p, bool constant_params,
                         uint32_t seed) {
  KernelCase c;
  c.factory = &CreateNativeBatchNormKernel;
  c.op_type = "BatchNormalization";
  c.opset = 15;
  c.seed = seed;
  c.attributes = {ir::Attribute::Float("epsilon", 1e-3f)};
  c.label = "BatchNormalization " + SizesString(x.sizes()) + " " + LayoutName(layout) +
            (constant_params ? " constant params" : " run-time params");
  auto param = [&](const Tensor& t) { return constant_params ? Constant(t) : Dynamic(t); };
  c.inputs = {Dynamic(std::move(x), layout), param(p.scale), param(p.bias), param(p.mean),
              param(p.var)};
  c.tolerance = 1e-5;
  return c;
}

TEST(NativeBatchNorm, MatchesReferenceOverChannelsSpatialSizesAndLayouts) {
  uint32_t seed = TestSeed(4101);
  std::mt19937 rng(seed);
  for (int64_t channels : {1, 3, 7, 17, 33}) {
    const Params p = RandomParams(channels, rng);
    for (bool constant_params : {true, false}) {
      for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{2, channels},
                                                {1, channels, 5},
                                                {2, channels, 3, 7},
                                                {1, channels, 1, 1},
                                                {1, channels, 9, 13},
                                                {1, channels, 3, 5, 2}}) {
        Tensor x = RandomTensor(sizes, rng, -4.0f, 4.0f);
        EXPECT_TRUE(CheckKernel(BatchNormCase(x, Layout::kPlain, p, constant_params, seed)));
        if (sizes.size() == 4) {
          EXPECT_TRUE(CheckKernel(BatchNormCase(x, Layout::kNhwc, p, constant_params, seed)));
        }
      }
    }
  }
}

TEST(NativeBatchNorm, RunsInPlace) {
  uint32_t seed = TestSeed(4102);
  std::mt19937 rng(seed);
  const Params p = RandomParams(17, rng);
  for (Layout layout : {Layout::kPlain, Layout::kNhwc}) {
    KernelCase c = BatchNormCase(RandomTensor({2, 17, 5, 3}, rng), layout, p, true, seed);
    c.in_place_input = 0;
    EXPECT_TRUE(CheckKernel(c));
  }
}

TEST(NativeBatchNorm, LargeInputSplitAcrossThreads) {
  uint32_t seed = TestSeed(4103);
  std::mt19937 rng(seed);
  const Params p = RandomParams(64, rng);
  for (Layout layout : {Layout::kPlain, Layout::kNhwc}) {
    EXPECT_TRUE(
        CheckKernel(BatchNormCase(RandomTensor({1, 64, 40, 41}, rng), layout, p, true, seed)));
  }
}

TEST(NativeBatchNorm, LeavesTrainingModeAndOtherTypesToTheReference) {
  uint32_t seed = TestSeed(4104);
  std::mt19937 rng(seed);
  const Params p = RandomParams(3, rng);
  KernelCase training = BatchNormCase(RandomTensor({2, 3, 4}, rng), Layout::kPlain, p, true, seed);
  training.attributes.push_back(ir::Attribute::Int("training_mode", 1));
  training.num_outputs = 3;
  training.expect = Expect::kNotApplicable;
  training.label += " training_mode=1";
  EXPECT_TRUE(CheckKernel(training));

  KernelCase f64 = BatchNormCase(Tensor::FromVector<double>({1, 3}, {1.0, 2.0, 3.0}),
                                 Layout::kPlain, p, true, seed);
  f64.expect = Expect::kNotApplicable;
  f64.label += " float64 X";
  EXPECT_TRUE(CheckKernel(f64));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
