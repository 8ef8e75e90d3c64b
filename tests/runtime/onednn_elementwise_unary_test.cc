// oneDNN unary elementwise ops (eltwise primitives) against the reference tier: every op
// the fast path claims over odd sizes and ranks 1 to 5, plain and kNhwc, in place, and the
// ops and operands it must leave alone.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

struct UnaryOp {
  std::string op;
  std::vector<Attribute> attributes;
  float lo = -4.0f, hi = 4.0f;  // input range
  double tolerance = 1e-4;
};

const std::vector<UnaryOp>& FastUnaryOps() {
  static const std::vector<UnaryOp> kOps = {{"Relu"},
                                            {"LeakyRelu"},
                                            {"LeakyRelu", {Attribute::Float("alpha", 0.3f)}},
                                            {"Sigmoid"},
                                            {"Tanh"},
                                            {"HardSwish"},
                                            {"Exp", {}, -5.0f, 5.0f},
                                            {"Sqrt", {}, 0.0f, 9.0f},
                                            {"Abs"},
                                            {"Elu"},
                                            {"Elu", {Attribute::Float("alpha", 0.5f)}},
                                            {"Softplus", {}, -10.0f, 10.0f},
                                            {"Neg"}};
  return kOps;
}

KernelCase MakeUnaryCase(const UnaryOp& u, const std::vector<int64_t>& sizes, Layout layout,
                         std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnElementwiseKernel;
  c.op_type = u.op;
  c.attributes = u.attributes;
  c.seed = seed;
  c.tolerance = u.tolerance;
  c.label = SizesString(sizes);
  if (!u.attributes.empty()) c.label += " alpha " + std::to_string(u.attributes[0].f);
  c.inputs = {Dynamic(RandomTensor(sizes, rng, u.lo, u.hi), layout)};
  return c;
}

TEST(OnednnUnary, EveryOpOverOddSizesAndBothLayouts) {
  uint32_t seed = TestSeed(5101);
  std::mt19937 rng(seed);
  for (const UnaryOp& u : FastUnaryOps()) {
    for (int64_t c : {1, 2, 3, 5, 7, 15, 17, 31, 33}) {
      std::vector<int64_t> sizes = {c % 2 + 1, c, 1 + c % 5, 3 + c % 4};
      for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
        EXPECT_TRUE(CheckKernel(MakeUnaryCase(u, sizes, layout, rng, seed)));
      }
    }
  }
}

// Clip with constant bounds (opset 11+ inputs, one bound omitted, opset 6 attributes).
TEST(OnednnUnary, ClipWithConstantBounds) {
  uint32_t seed = TestSeed(5104);
  std::mt19937 rng(seed);
  auto scalar = [](float v) { return Constant(Tensor::FromVector<float>({}, {v})); };
  for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
    UnaryOp clip{"Clip"};
    KernelCase both = MakeUnaryCase(clip, {2, 17, 5, 3}, layout, rng, seed);
    both.inputs.push_back(scalar(0.0f));
    both.inputs.push_back(scalar(6.0f));
    EXPECT_TRUE(CheckKernel(both));
    KernelCase upper = MakeUnaryCase(clip, {1, 33, 4, 4}, layout, rng, seed);
    upper.inputs.push_back(KernelInput{});
    upper.inputs.push_back(scalar(1.5f));
    EXPECT_TRUE(CheckKernel(upper));
    KernelCase old = MakeUnaryCase(
        UnaryOp{"Clip", {Attribute::Float("min", -1.0f), Attribute::Float("max", 2.0f)}},
        {1, 7, 3, 5}, layout, rng, seed);
    old.opset = 6;
    EXPECT_TRUE(CheckKernel(old));
  }
}

TEST(OnednnUnary, RanksOneToFive) {
  uint32_t seed = TestSeed(5102);
  std::mt19937 rng(seed);
  for (const UnaryOp& u : FastUnaryOps()) {
    for (const std::vector<int64_t>& sizes :
         std::vector<std::vector<int64_t>>{{1}, {33}, {7, 17}, {3, 5, 31}, {2, 3, 5, 7, 2}}) {
      EXPECT_TRUE(CheckKernel(MakeUnaryCase(u, sizes, Layout::kPlain, rng, seed)));
    }
  }
}

TEST(OnednnUnary, InPlace) {
  uint32_t seed = TestSeed(5103);
  std::mt19937 rng(seed);
  for (const UnaryOp& u : FastUnaryOps()) {
    for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
      KernelCase c = MakeUnaryCase(u, {2, 17, 3, 5}, layout, rng, seed);
      c.in_place_input = 0;
      c.label += " in place";
      EXPECT_TRUE(CheckKernel(c));
    }
  }
}

// Values where approximations bend: zeros, large magnitudes, tiny magnitudes.
TEST(OnednnUnary, SpecialValues) {
  uint32_t seed = TestSeed(5104);
  const std::vector<float> values = {0.0f,  -0.0f,  1e-7f, -1e-7f, 3.0f,  -3.0f, 20.0f, -20.0f,
                                     80.0f, -80.0f, 1e-3f, 0.5f,   -0.5f, 6.0f,  -6.0f};
  const int64_t n = static_cast<int64_t>(values.size());
  for (const UnaryOp& u : FastUnaryOps()) {
    if (u.op == "Sqrt" || u.op == "Exp") continue;  // domain/range checked by the sweeps
    KernelCase c;
    c.factory = &CreateOnednnElementwiseKernel;
    c.op_type = u.op;
    c.attributes = u.attributes;
    c.seed = seed;
    c.label = "special values";
    c.inputs = {Dynamic(Tensor::FromVector<float>({n}, values))};
    EXPECT_TRUE(CheckKernel(c));
  }
}

TEST(OnednnUnary, LeavesOtherOpsAndOperandsToTheReference) {
  uint32_t seed = TestSeed(5105);
  std::mt19937 rng(seed);
  for (const char* op : {"Erf", "HardSigmoid", "Log", "Reciprocal", "Floor"}) {
    KernelCase c =
        MakeUnaryCase(UnaryOp{op, {}, 0.5f, 2.0f}, {1, 3, 5, 5}, Layout::kNhwc, rng, seed);
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c));
  }
  KernelCase constant_input = MakeUnaryCase(FastUnaryOps()[0], {3, 5}, Layout::kPlain, rng, seed);
  constant_input.inputs[0].constant = true;
  constant_input.label += " constant input";
  constant_input.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(constant_input));

  KernelCase scalar = MakeUnaryCase(FastUnaryOps()[0], {}, Layout::kPlain, rng, seed);
  scalar.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(scalar));

  KernelCase integers;
  integers.factory = &CreateOnednnElementwiseKernel;
  integers.op_type = "Abs";
  integers.seed = seed;
  integers.label = "int32 Abs";
  integers.inputs = {Dynamic(Tensor::FromVector<int32_t>({3}, {-1, 0, 5}))};
  integers.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(integers));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
