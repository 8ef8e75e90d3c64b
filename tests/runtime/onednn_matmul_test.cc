// oneDNN Gemm and MatMul (constant second operand) against the reference tier: M, K, N
// sweeps over odd sizes, transB, alpha and beta, every bias shape C can take, batched
// MatMul, and the variants the fast path must leave alone.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

constexpr int64_t kOddSizes[] = {1, 2, 3, 5, 7, 15, 17, 31, 33};

enum class Bias { kNone, kRow1D, kRow2D, kFull, kScalar, kColumn };

const char* BiasName(Bias b) {
  switch (b) {
    case Bias::kNone:
      return "no C";
    case Bias::kRow1D:
      return "C[N]";
    case Bias::kRow2D:
      return "C[1,N]";
    case Bias::kFull:
      return "C[M,N]";
    case Bias::kScalar:
      return "C[1]";
    case Bias::kColumn:
      return "C[M,1]";
  }
  return "?";
}

struct GemmShape {
  int64_t m = 3, k = 5, n = 7;
  bool trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  Bias bias = Bias::kRow1D;
};

KernelCase MakeGemmCase(const GemmShape& s, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  // A C that is no row ([M,N], or [M,1] when N == 1) becomes a full [M,N] bias, which
  // oneDNN 2.6 runs only with its reference matmul: the factory declines it there.
  bool full_bias = (s.bias == Bias::kFull || s.bias == Bias::kColumn) && s.m > 1;
  if (full_bias && s.beta != 0.0f) c.expect = Expect::kFastPathIfSupported;
  c.factory = &CreateOnednnMatMulKernel;
  c.op_type = "Gemm";
  c.seed = seed;
  c.label = "M" + std::to_string(s.m) + " K" + std::to_string(s.k) + " N" + std::to_string(s.n) +
            (s.trans_b ? " transB" : "") + " alpha " + std::to_string(s.alpha) + " beta " +
            std::to_string(s.beta) + " " + BiasName(s.bias);
  c.attributes = {Attribute::Int("transB", s.trans_b ? 1 : 0), Attribute::Float("alpha", s.alpha),
                  Attribute::Float("beta", s.beta)};
  std::vector<int64_t> b_sizes =
      s.trans_b ? std::vector<int64_t>{s.n, s.k} : std::vector<int64_t>{s.k, s.n};
  c.inputs = {Dynamic(RandomTensor({s.m, s.k}, rng)), Constant(RandomTensor(b_sizes, rng))};
  std::vector<int64_t> c_sizes;
  switch (s.bias) {
    case Bias::kNone:
      break;
    case Bias::kRow1D:
      c_sizes = {s.n};
      break;
    case Bias::kRow2D:
      c_sizes = {1, s.n};
      break;
    case Bias::kFull:
      c_sizes = {s.m, s.n};
      break;
    case Bias::kScalar:
      c_sizes = {1};
      break;
    case Bias::kColumn:
      c_sizes = {s.m, 1};
      break;
  }
  if (s.bias != Bias::kNone) c.inputs.push_back(Constant(RandomTensor(c_sizes, rng)));
  return c;
}

TEST(OnednnGemm, SizeSweepWithEveryBiasShape) {
  uint32_t seed = TestSeed(4001);
  std::mt19937 rng(seed);
  for (int64_t m : kOddSizes) {
    for (int64_t n : kOddSizes) {
      GemmShape s;
      s.m = m;
      s.n = n;
      s.k = kOddSizes[rng() % std::size(kOddSizes)];
      s.trans_b = rng() % 2 == 0;
      s.bias = std::vector<Bias>{Bias::kNone, Bias::kRow1D, Bias::kRow2D, Bias::kFull}[rng() % 4];
      EXPECT_TRUE(CheckKernel(MakeGemmCase(s, rng, seed)));
    }
  }
}

TEST(OnednnGemm, AlphaBetaAndTransB) {
  uint32_t seed = TestSeed(4002);
  std::mt19937 rng(seed);
  for (float alpha : {1.0f, 0.5f, -2.0f}) {
    for (float beta : {1.0f, 0.0f, 0.25f, -1.5f}) {
      for (bool trans_b : {false, true}) {
        for (Bias bias : {Bias::kNone, Bias::kRow1D, Bias::kRow2D, Bias::kFull}) {
          GemmShape s;
          s.m = 5;
          s.k = 17;
          s.n = 15;
          s.alpha = alpha;
          s.beta = beta;
          s.trans_b = trans_b;
          s.bias = bias;
          EXPECT_TRUE(CheckKernel(MakeGemmCase(s, rng, seed)));
        }
      }
    }
  }
}

// M == 1 makes C[N], C[1,N] and C[M,N] the same row; N == 1 makes C[M,1] a full C.
TEST(OnednnGemm, DegenerateRowsAndColumns) {
  uint32_t seed = TestSeed(4003);
  std::mt19937 rng(seed);
  for (Bias bias : {Bias::kRow1D, Bias::kRow2D, Bias::kFull}) {
    GemmShape s;
    s.m = 1;
    s.bias = bias;
    s.alpha = 0.5f;
    EXPECT_TRUE(CheckKernel(MakeGemmCase(s, rng, seed)));
  }
  GemmShape column;
  column.n = 1;
  column.bias = Bias::kColumn;
  EXPECT_TRUE(CheckKernel(MakeGemmCase(column, rng, seed)));
}

TEST(OnednnGemm, LeavesUnsupportedVariantsToTheReference) {
  uint32_t seed = TestSeed(4004);
  std::mt19937 rng(seed);
  auto not_applicable = [&](GemmShape s, const std::string& what) {
    KernelCase c = MakeGemmCase(s, rng, seed);
    c.label += " " + what;
    c.expect = Expect::kNotApplicable;
    return c;
  };
  GemmShape s;
  s.bias = Bias::kScalar;
  EXPECT_TRUE(CheckKernel(not_applicable(s, "(scalar C)")));
  s.bias = Bias::kColumn;
  EXPECT_TRUE(CheckKernel(not_applicable(s, "(column C)")));
  s.bias = Bias::kRow1D;
  s.alpha = 0.0f;
  EXPECT_TRUE(CheckKernel(not_applicable(s, "(alpha 0 with C)")));

  KernelCase trans_a = MakeGemmCase(GemmShape{}, rng, seed);
  trans_a.label += " transA";
  trans_a.attributes.push_back(Attribute::Int("transA", 1));
  trans_a.inputs[0] = Dynamic(RandomTensor({5, 3}, rng));
  trans_a.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(trans_a));

  KernelCase dynamic_b = MakeGemmCase(GemmShape{}, rng, seed);
  dynamic_b.label += " B computed at run time";
  dynamic_b.inputs[1].constant = false;
  dynamic_b.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(dynamic_b));

  KernelCase dynamic_c = MakeGemmCase(GemmShape{}, rng, seed);
  dynamic_c.label += " C computed at run time";
  dynamic_c.inputs[2].constant = false;
  dynamic_c.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(dynamic_c));
}

KernelCase MakeMatMulCase(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                          std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnMatMulKernel;
  c.op_type = "MatMul";
  c.seed = seed;
  c.label = SizesString(a) + " x " + SizesString(b);
  c.inputs = {Dynamic(RandomTensor(a, rng)), Constant(RandomTensor(b, rng))};
  return c;
}

TEST(OnednnMatMul, TwoDimensionalSweep) {
  uint32_t seed = TestSeed(4101);
  std::mt19937 rng(seed);
  for (int64_t m : kOddSizes) {
    for (int64_t k : kOddSizes) {
      int64_t n = kOddSizes[rng() % std::size(kOddSizes)];
      EXPECT_TRUE(CheckKernel(MakeMatMulCase({m, k}, {k, n}, rng, seed)));
    }
  }
}

TEST(OnednnMatMul, BatchedFirstOperandCollapsesIntoRows) {
  uint32_t seed = TestSeed(4102);
  std::mt19937 rng(seed);
  for (int64_t batch : {1, 2, 3, 5}) {
    for (int64_t m : {1, 7, 17}) {
      int64_t k = kOddSizes[rng() % std::size(kOddSizes)];
      int64_t n = kOddSizes[rng() % std::size(kOddSizes)];
      EXPECT_TRUE(CheckKernel(MakeMatMulCase({batch, m, k}, {k, n}, rng, seed)));
    }
  }
  EXPECT_TRUE(CheckKernel(MakeMatMulCase({2, 3, 5, 7}, {7, 33}, rng, seed)));
}

// qtune::MatMulBias [rows, k] x [k, n] + bias, with `activation` and optionally a Sum.
KernelCase MakeMatMulBiasCase(const std::vector<int64_t>& a, int64_t n,
                              const std::string& activation, bool with_sum, std::mt19937& rng,
                              uint32_t seed) {
  KernelCase c = MakeMatMulCase(a, {a.back(), n}, rng, seed);
  c.op_type = "MatMulBias";
  c.domain = "qtune";
  c.label = "MatMulBias " + c.label + " " + activation + (with_sum ? " + Sum" : "");
  c.inputs.push_back(Constant(RandomTensor({n}, rng)));
  if (with_sum) {
    std::vector<int64_t> y = a;
    y.back() = n;
    c.inputs.push_back(Dynamic(RandomTensor(y, rng, -2.0f, 2.0f)));
  }
  if (!activation.empty()) c.attributes = {Attribute::String("activation", activation)};
  return c;
}

TEST(OnednnMatMul, MatMulBiasGeluAndSum) {
  // Gelu runs as GeluErf after the product on AVX-512 CPUs (the oneDNN post-op elsewhere);
  // the Sum is a oneDNN sum post-op before the activation, in place or copied into dst.
  uint32_t seed = TestSeed(4104);
  std::mt19937 rng(seed);
  AtOneAndTwoThreads([&] {
    for (const std::vector<int64_t>& a :
         {std::vector<int64_t>{197, 192}, {1, 33, 17}, {2, 5, 64}, {9, 7}}) {
      for (int64_t n : {16, 77, 768}) {
        for (const std::string activation : {"", "Gelu", "Relu"}) {
          for (bool with_sum : {false, true}) {
            KernelCase c = MakeMatMulBiasCase(a, n, activation, with_sum, rng, seed);
            EXPECT_TRUE(CheckKernel(c));
            if (with_sum) {
              c.in_place_input = 3;
              c.label += " in place";
              EXPECT_TRUE(CheckKernel(c));
            }
          }
        }
      }
    }
  });
}

TEST(OnednnMatMul, LeavesUnsupportedVariantsToTheReference) {
  uint32_t seed = TestSeed(4103);
  std::mt19937 rng(seed);
  std::vector<KernelCase> cases = {
      MakeMatMulCase({5}, {5, 3}, rng, seed),           // vector first operand
      MakeMatMulCase({4, 5}, {5}, rng, seed),           // vector second operand
      MakeMatMulCase({2, 4, 5}, {2, 5, 3}, rng, seed),  // batched weights
      MakeMatMulCase({4, 5}, {5, 3}, rng, seed)};       // weights computed at run time
  cases.back().inputs[1].constant = false;
  cases.back().label += " (B computed at run time)";
  for (KernelCase& c : cases) {
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c));
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
