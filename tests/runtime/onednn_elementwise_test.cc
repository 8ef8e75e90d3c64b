// oneDNN binary elementwise ops (Add, Sub, Mul, Div, Max, Min) against the reference
// tier: same-shape and broadcast operands ([N,C,1,1], constants [C,1,1], [W] and scalars),
// swapped operands, plain and kNhwc, odd sizes, in-place runs, and the variants the fast
// path must leave alone.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

constexpr const char* kBinaryOps[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
constexpr int64_t kOddSizes[] = {1, 2, 3, 5, 7, 15, 17, 31, 33};

bool Commutative(const std::string& op) { return op != "Sub" && op != "Div"; }

// Operand values; a divisor stays away from zero (|v| in [0.5, 2]).
Tensor Operand(const std::vector<int64_t>& sizes, std::mt19937& rng, bool divisor) {
  if (!divisor) return RandomTensor(sizes, rng, -2.0f, 2.0f);
  Tensor t = RandomTensor(sizes, rng, 0.5f, 2.0f);
  for (float& v : t.span<float>()) v = rng() % 2 == 0 ? v : -v;
  return t;
}

struct BinaryOperand {
  std::vector<int64_t> sizes;
  bool constant = false;
  Layout layout = Layout::kPlain;
};

KernelCase MakeBinaryCase(const std::string& op, const BinaryOperand& a, const BinaryOperand& b,
                          std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnElementwiseKernel;
  c.op_type = op;
  c.seed = seed;
  c.label = SizesString(a.sizes) + " " + op + " " + SizesString(b.sizes);
  for (size_t i = 0; i < 2; ++i) {
    const BinaryOperand& operand = i == 0 ? a : b;
    Tensor value = Operand(operand.sizes, rng, op == "Div" && i == 1);
    c.inputs.push_back(operand.constant ? Constant(value) : Dynamic(value, operand.layout));
  }
  return c;
}

BinaryOperand Dyn(std::vector<int64_t> sizes, Layout layout) {
  return {std::move(sizes), false, layout};
}
BinaryOperand Const(std::vector<int64_t> sizes) { return {std::move(sizes), true, Layout::kPlain}; }

TEST(OnednnBinary, SameShapeOverOddSizesAndLayouts) {
  uint32_t seed = TestSeed(5001);
  std::mt19937 rng(seed);
  for (const char* op : kBinaryOps) {
    for (int64_t c : kOddSizes) {
      std::vector<int64_t> sizes = {c % 2 + 1, c, kOddSizes[rng() % 9], kOddSizes[rng() % 9]};
      for (Layout la : {Layout::kNhwc, Layout::kPlain}) {
        for (Layout lb : {Layout::kNhwc, Layout::kPlain}) {
          EXPECT_TRUE(CheckKernel(MakeBinaryCase(op, Dyn(sizes, la), Dyn(sizes, lb), rng, seed)));
        }
      }
    }
  }
}

TEST(OnednnBinary, BroadcastSecondOperand) {
  uint32_t seed = TestSeed(5002);
  std::mt19937 rng(seed);
  for (const char* op : kBinaryOps) {
    for (int64_t c : {1, 3, 16, 17, 33}) {
      std::vector<int64_t> x = {2, c, 5, 7};
      for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
        for (const BinaryOperand& b :
             {Dyn({2, c, 1, 1}, layout), Dyn({1, c, 1, 1}, layout), Dyn({2, 1, 5, 7}, layout),
              Dyn({1, 1, 1, 7}, layout), Const({c, 1, 1}), Const({1, c, 1, 1}), Const({}),
              Const({1}), Const({7}), Const({5, 7}), Const({c, 5, 7}), Const({2, c, 5, 7})}) {
          KernelCase kc = MakeBinaryCase(op, Dyn(x, layout), b, rng, seed);
          // Broadcasting over all but the batch axis has only oneDNN's reference binary.
          if (b.sizes == std::vector<int64_t>{2, 1, 1, 1}) kc.expect = Expect::kFastPathIfSupported;
          EXPECT_TRUE(CheckKernel(kc));
        }
      }
    }
  }
}

// The broadcast operand first: commutative ops swap it into second place; Sub and Div
// cannot and leave it to the reference.
TEST(OnednnBinary, BroadcastFirstOperand) {
  uint32_t seed = TestSeed(5003);
  std::mt19937 rng(seed);
  for (const char* op : kBinaryOps) {
    for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
      std::vector<int64_t> x = {1, 17, 3, 5};
      for (const BinaryOperand& a : {Dyn({1, 17, 1, 1}, layout), Const({17, 1, 1}), Const({})}) {
        KernelCase c = MakeBinaryCase(op, a, Dyn(x, layout), rng, seed);
        c.expect = Commutative(op) ? Expect::kFastPath : Expect::kNotApplicable;
        EXPECT_TRUE(CheckKernel(c));
      }
    }
  }
}

TEST(OnednnBinary, OtherRanksInPlainLayout) {
  uint32_t seed = TestSeed(5004);
  std::mt19937 rng(seed);
  for (const char* op : kBinaryOps) {
    EXPECT_TRUE(CheckKernel(MakeBinaryCase(op, Dyn({33}, Layout::kPlain), Const({}), rng, seed)));
    EXPECT_TRUE(CheckKernel(
        MakeBinaryCase(op, Dyn({5, 17}, Layout::kPlain), Dyn({5, 17}, Layout::kPlain), rng, seed)));
    EXPECT_TRUE(
        CheckKernel(MakeBinaryCase(op, Dyn({5, 17}, Layout::kPlain), Const({17}), rng, seed)));
    EXPECT_TRUE(CheckKernel(
        MakeBinaryCase(op, Dyn({3, 7, 15}, Layout::kPlain), Const({3, 1, 15}), rng, seed)));
    KernelCase rank5 = MakeBinaryCase(op, Dyn({2, 3, 2, 5, 3}, Layout::kPlain),
                                      Dyn({2, 3, 1, 5, 1}, Layout::kPlain), rng, seed);
    rank5.expect = Expect::kFastPathIfSupported;  // oneDNN 2.6: reference binary only
    EXPECT_TRUE(CheckKernel(rank5));
    EXPECT_TRUE(CheckKernel(
        MakeBinaryCase(op, Dyn({2, 3, 2, 5, 3}, Layout::kPlain), Const({3, 1, 1, 1}), rng, seed)));
  }
}

// The output may take the buffer of the operand oneDNN reads as src0 (the first, or the
// second when a commutative op swapped them): oneDNN supports dst == src0.
TEST(OnednnBinary, InPlace) {
  uint32_t seed = TestSeed(5005);
  std::mt19937 rng(seed);
  for (const char* op : kBinaryOps) {
    for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
      KernelCase c = MakeBinaryCase(op, Dyn({2, 17, 3, 5}, layout), Const({17, 1, 1}), rng, seed);
      c.in_place_input = 0;
      c.label += " in place";
      EXPECT_TRUE(CheckKernel(c));
      KernelCase same =
          MakeBinaryCase(op, Dyn({1, 5, 7, 3}, layout), Dyn({1, 5, 7, 3}, layout), rng, seed);
      same.in_place_input = 0;
      same.label += " same shapes, in place";
      EXPECT_TRUE(CheckKernel(same));
      if (Commutative(op)) {
        KernelCase swapped =
            MakeBinaryCase(op, Dyn({1, 5, 1, 1}, layout), Dyn({1, 5, 7, 3}, layout), rng, seed);
        swapped.in_place_input = 1;
        swapped.label += " swapped, in place";
        EXPECT_TRUE(CheckKernel(swapped));
      }
    }
  }
}

TEST(OnednnBinary, LeavesUnsupportedVariantsToTheReference) {
  uint32_t seed = TestSeed(5006);
  std::mt19937 rng(seed);
  auto expect_not_applicable = [](KernelCase c, const std::string& what) {
    c.label += " (" + what + ")";
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c));
  };
  // Both operands broadcast into the output.
  expect_not_applicable(MakeBinaryCase("Add", Dyn({1, 3, 5, 5}, Layout::kNhwc),
                                       Dyn({2, 3, 1, 1}, Layout::kNhwc), rng, seed),
                        "both broadcast");
  // A lower-rank operand computed at run time.
  expect_not_applicable(MakeBinaryCase("Mul", Dyn({2, 3, 5, 5}, Layout::kPlain),
                                       Dyn({5, 5}, Layout::kPlain), rng, seed),
                        "lower-rank dynamic operand");
  // Both constants (constant folding's job).
  expect_not_applicable(MakeBinaryCase("Add", Const({2, 3}), Const({2, 3}), rng, seed),
                        "both constant");

  KernelCase integers;
  integers.factory = &CreateOnednnElementwiseKernel;
  integers.op_type = "Add";
  integers.seed = seed;
  integers.label = "int32 Add";
  integers.inputs = {Dynamic(Tensor::FromVector<int32_t>({2, 2}, {1, 2, 3, 4})),
                     Dynamic(Tensor::FromVector<int32_t>({2, 2}, {5, 6, 7, 8}))};
  integers.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(integers));

  for (const char* op : {"Max", "Min"}) {
    KernelCase three;
    three.factory = &CreateOnednnElementwiseKernel;
    three.op_type = op;
    three.seed = seed;
    three.label = std::string("three-input ") + op;
    for (int i = 0; i < 3; ++i) three.inputs.push_back(Dynamic(RandomTensor({2, 3}, rng)));
    three.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(three));
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
