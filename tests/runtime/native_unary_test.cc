// Native float32 Log, Erf, Reciprocal, Floor, Ceil and Pow by a constant exponent against
// the reference tier: exact (the same C library functions; Log on AVX-512F CPUs within
// 2 ulp, swept over every binade), in both layouts, in place, over odd sizes and the
// values where the functions bend (0, 1, negatives, large magnitudes, infinities, NaN).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/kernel_test_util.h"
#include "runtime/session.h"

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
  // Log's AVX-512 path is within 2 ulp (LogWithinTwoUlpsOfTheCLibrary), the rest exact.
  c.tolerance = op == "Log" ? 3e-7 : 0;
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
  const float infinity = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {0.0f,   -0.0f, 1.0f,   -1.0f, 0.5f,     -0.5f,
                                     1e-30f, 1e30f, -1e30f, 2.5f,  -2.5f,    3.0f,
                                     1e-40f, 1e38f, 1e-45f, 7.0f,  infinity, -infinity};
  for (const char* op : kOps) {
    Tensor x = Tensor::FromVector<float>({static_cast<int64_t>(values.size())}, values);
    KernelCase c = UnaryCase(op, x, Layout::kPlain, seed);
    c.label += " special values";
    EXPECT_TRUE(CheckKernel(c));
  }
}

// Distance in units in the last place between two finite floats of the same sign.
int64_t UlpDistance(float a, float b) {
  return std::abs(int64_t{std::bit_cast<int32_t>(a)} - int64_t{std::bit_cast<int32_t>(b)});
}

TEST(NativeUnary, LogWithinTwoUlpsOfTheCLibrary) {
  // Every binade from the smallest subnormal to the largest float, 64 mantissas each, and
  // the values around 1 where log is smallest.
  std::vector<float> values;
  for (int exponent = -149; exponent <= 127; ++exponent) {
    for (int k = 0; k < 64; ++k) values.push_back(std::ldexp(1.0f + k / 64.0f, exponent));
  }
  for (int k = 1; k <= 2000; ++k) {
    values.push_back(1.0f + k * 0x1p-23f);
    values.push_back(1.0f - k * 0x1p-24f);
  }
  const int64_t n = static_cast<int64_t>(values.size());
  Tensor x = Tensor::FromVector<float>({n}, values);
  ir::GraphBuilder b(13);
  b.Output(b.Op("Log", {b.Input("x", DataType::kFloat32, {n})}));
  auto session = Session::Create(*b.Build(), SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = (*session)->Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float* y = (*out)[0].second.data<float>();
  int64_t worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float expected = std::log(values[i]);
    if (expected == 0.0f) {
      EXPECT_EQ(y[i], 0.0f) << "log(1)";
      continue;
    }
    const int64_t ulps = UlpDistance(y[i], expected);
    worst = std::max(worst, ulps);
    EXPECT_LE(ulps, 2) << "log(" << values[i] << ") = " << y[i] << ", C library " << expected;
  }
  RecordProperty("worst_ulps", static_cast<int>(worst));
}

KernelCase PowCase(Tensor x, KernelInput exponent, const std::string& what, uint32_t seed) {
  KernelCase c = UnaryCase("Pow", std::move(x), Layout::kPlain, seed);
  c.label += " exponent " + what;
  c.inputs.push_back(std::move(exponent));
  return c;
}

// x * x for exponent 2, the reference's float(pow(double, double)) otherwise: exact, for
// exponents of each type the kernel reads, on the special values too.
TEST(NativeUnary, PowByAConstantExponentMatchesExactly) {
  uint32_t seed = TestSeed(3304);
  std::mt19937 rng(seed);
  const float infinity = std::numeric_limits<float>::infinity();
  Tensor specials = Tensor::FromVector<float>(
      {12}, {0.0f, -0.0f, 1.0f, -1.0f, 1e-30f, 1e30f, -1e30f, 1e-45f, 3e38f, infinity, -infinity,
             std::numeric_limits<float>::quiet_NaN()});
  for (float e : {2.0f, 0.5f, 3.0f, -1.0f, 1.5f, 0.0f}) {
    for (const Tensor& x : {RandomTensor({3, 43}, rng, -8.0f, 8.0f), specials}) {
      EXPECT_TRUE(CheckKernel(
          PowCase(x, Constant(Tensor::FromVector<float>({}, {e})), std::to_string(e), seed)));
    }
  }
  Tensor x = RandomTensor({2, 65}, rng, -3.0f, 3.0f);
  EXPECT_TRUE(CheckKernel(
      PowCase(x, Constant(Tensor::FromVector<int64_t>({1}, {2})), "int64 [1] 2", seed)));
  EXPECT_TRUE(
      CheckKernel(PowCase(x, Constant(Tensor::FromVector<double>({}, {3.0})), "float64 3", seed)));
  EXPECT_TRUE(
      CheckKernel(PowCase(x, Constant(Tensor::FromVector<int32_t>({}, {-2})), "int32 -2", seed)));
  KernelCase in_place =
      PowCase(x, Constant(Tensor::FromVector<float>({}, {2.0f})), "2 in place", seed);
  in_place.in_place_input = 0;
  EXPECT_TRUE(CheckKernel(in_place));
}

// Exponents computed at run time, or one per element, stay with the reference tier.
TEST(NativeUnary, PowLeavesTensorAndRunTimeExponents) {
  uint32_t seed = TestSeed(3305);
  std::mt19937 rng(seed);
  Tensor x = RandomTensor({4, 5}, rng, 0.5f, 2.0f);
  KernelCase run_time =
      PowCase(x, Dynamic(Tensor::FromVector<float>({}, {2.0f})), "run-time", seed);
  run_time.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(run_time));
  KernelCase per_element = PowCase(x, Constant(RandomTensor({4, 5}, rng)), "per element", seed);
  per_element.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(per_element));
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
