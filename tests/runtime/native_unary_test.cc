// Native float32 Log, Erf, Reciprocal, Floor and Ceil against the reference tier: exact
// (the same C library functions), in both layouts, in place, over odd sizes and the values
// where the functions bend (0, 1, negatives, large magnitudes).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

const char* const kOps[] = {"Log", "Erf", "Reciprocal", "Floor", "Ceil"};

KernelCase UnaryCase(const std::string& op, Tensor x, Layout layout, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateNativeUnaryKernel;
  c.op_type = op;
  c.opset = 13;
  c.seed = seed;
  c.label = op + " " + SizesString(x.sizes()) + " " + LayoutName(layout);
  c.inputs = {Dynamic(std::move(x), layout)};
  c.tolerance = 0;
  return c;
}

TEST(NativeUnary, MatchesReferenceExactlyInBothLayoutsAndInPlace) {
  uint32_t seed = TestSeed(3301);
  std::mt19937 rng(seed);
  for (const char* op : kOps) {
    const float lo = std::string(op) == "Log" ? 1e-6f : -40.0f;
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{1}, {17}, {3, 33}, {2, 5, 7, 3}, {1, 101, 80}}) {
      Layout layout = sizes.size() == 4 ? Layout::kNhwc : Layout::kPlain;
      EXPECT_TRUE(CheckKernel(UnaryCase(op, RandomTensor(sizes, rng, lo, 40.0f), layout, seed)));
    }
    KernelCase in_place = UnaryCase(op, RandomTensor({4, 9}, rng, lo, 40.0f), Layout::kPlain, seed);
    in_place.in_place_input = 0;
    EXPECT_TRUE(CheckKernel(in_place));
  }
}

TEST(NativeUnary, SpecialValues) {
  uint32_t seed = TestSeed(3302);
  const std::vector<float> values = {0.0f,   -0.0f, 1.0f,   -1.0f, 0.5f,  -0.5f,
                                     1e-30f, 1e30f, -1e30f, 2.5f,  -2.5f, 3.0f};
  for (const char* op : kOps) {
    Tensor x = Tensor::FromVector<float>({static_cast<int64_t>(values.size())}, values);
    KernelCase c = UnaryCase(op, x, Layout::kPlain, seed);
    c.label += " special values";
    EXPECT_TRUE(CheckKernel(c));
  }
}

TEST(NativeUnary, LeavesOtherTypesToTheReference) {
  uint32_t seed = TestSeed(3303);
  KernelCase c =
      UnaryCase("Floor", Tensor::FromVector<double>({2}, {1.5, -1.5}), Layout::kPlain, seed);
  c.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(c));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
