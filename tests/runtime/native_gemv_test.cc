// The native GEMV kernel (native_gemv.cc) against the reference tier: odd sizes around
// and far past the 64-column block and the 4-row group, every epilogue (bias, ReLU, the
// other fused activations, Gemm's alpha, beta and transB), batched first operands, the
// cases it must leave to oneDNN; and its packed loops alone (both ISAs, 1 and 2 threads)
// against a double-precision product, with sentinels on both sides of the output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"
#include "runtime/kernels/native_gemv_packed.h"

namespace qtune::runtime::kernel_testing {
namespace {

constexpr int64_t kSizes[] = {1, 3, 7, 17, 33, 255, 2049};

// Summing K products of values in [-1, 1) in float: allow for K roundings.
double ToleranceFor(int64_t k) { return k > 255 ? 1e-3 : 1e-4; }

KernelCase MatMulCase(std::vector<int64_t> a, int64_t n, std::mt19937& rng, uint32_t seed) {
  const int64_t k = a.back();
  KernelCase c;
  c.factory = &CreateNativeGemvKernel;
  c.op_type = "MatMul";
  c.seed = seed;
  c.label = "MatMul " + SizesString(a) + " x " + std::to_string(k) + "x" + std::to_string(n);
  c.inputs = {Dynamic(RandomTensor(a, rng)), Constant(RandomTensor({k, n}, rng))};
  c.tolerance = ToleranceFor(k);
  return c;
}

KernelCase MatMulBiasCase(int64_t m, int64_t k, int64_t n, const std::string& activation,
                          std::vector<float> params, std::mt19937& rng, uint32_t seed) {
  KernelCase c = MatMulCase({m, k}, n, rng, seed);
  c.op_type = "MatMulBias";
  c.domain = "qtune";
  c.label = "MatMulBias " + activation + " M" + std::to_string(m) + " K" + std::to_string(k) +
            " N" + std::to_string(n);
  c.inputs.push_back(Constant(RandomTensor({n}, rng)));
  if (!activation.empty()) {
    c.attributes = {Attribute::String("activation", activation)};
    if (!params.empty()) c.attributes.push_back(Attribute::Floats("activation_params", params));
  }
  return c;
}

TEST(NativeGemv, MatMulOddSizesUpToFourRows) {
  const uint32_t seed = TestSeed(6101);
  std::mt19937 rng(seed);
  for (int64_t m = 1; m <= 4; ++m) {
    for (int64_t n : kSizes) {
      for (int64_t k : kSizes) {
        if (k * n > 600000 && (k + n + m) % 3 != 0) continue;  // a few of the largest
        EXPECT_TRUE(CheckKernel(MatMulCase({m, k}, n, rng, seed)));
      }
    }
  }
}

TEST(NativeGemv, BatchedFirstOperandCollapsesIntoRows) {
  const uint32_t seed = TestSeed(6102);
  std::mt19937 rng(seed);
  EXPECT_TRUE(CheckKernel(MatMulCase({1, 1, 33}, 17, rng, seed)));
  EXPECT_TRUE(CheckKernel(MatMulCase({2, 2, 7}, 65, rng, seed)));
  EXPECT_TRUE(CheckKernel(MatMulCase({1, 3, 255}, 129, rng, seed)));
}

TEST(NativeGemv, BiasAndEveryActivation) {
  const uint32_t seed = TestSeed(6103);
  std::mt19937 rng(seed);
  const std::vector<std::pair<std::string, std::vector<float>>> activations = {
      {"", {}},        {"Relu", {}},      {"LeakyRelu", {0.1f}}, {"Clip", {-0.5f, 0.5f}},
      {"Sigmoid", {}}, {"HardSwish", {}}, {"Tanh", {}}};
  for (const auto& [activation, params] : activations) {
    for (int64_t n : {1, 17, 64, 255, 2049}) {
      const int64_t m = 1 + static_cast<int64_t>(rng() % 4);
      const int64_t k = kSizes[rng() % std::size(kSizes)];
      EXPECT_TRUE(CheckKernel(MatMulBiasCase(m, k, n, activation, params, rng, seed)));
    }
  }
}

TEST(NativeGemv, MatMulBiasSumBeforeTheActivation) {
  // qtune::MatMulBias's Sum input (a residual): added before the activation, also ReLU
  // (which otherwise runs in the product's registers). Never in place: the product is
  // written before the Sum is read (the kernel does not offer its buffer).
  const uint32_t seed = TestSeed(6105);
  std::mt19937 rng(seed);
  for (const std::string activation : {"", "Relu", "Tanh"}) {
    for (int64_t n : {1, 17, 64, 255}) {
      const int64_t m = 1 + static_cast<int64_t>(rng() % 4);
      const int64_t k = kSizes[rng() % std::size(kSizes)];
      KernelCase c = MatMulBiasCase(m, k, n, activation, {}, rng, seed);
      c.inputs.push_back(Dynamic(RandomTensor({m, n}, rng, -2.0f, 2.0f)));
      c.label += " + Sum";
      EXPECT_TRUE(CheckKernel(c));
    }
  }
}

TEST(NativeGemv, GemmAlphaBetaTransBAndRowBias) {
  const uint32_t seed = TestSeed(6104);
  std::mt19937 rng(seed);
  for (bool trans_b : {false, true}) {
    for (float alpha : {1.0f, -0.5f}) {
      for (float beta : {1.0f, 0.0f, 2.5f}) {
        for (int bias_rank : {0, 1, 2}) {
          const int64_t m = 1 + static_cast<int64_t>(rng() % 4);
          const int64_t k = kSizes[rng() % 6];
          const int64_t n = kSizes[rng() % std::size(kSizes)];
          KernelCase c;
          c.factory = &CreateNativeGemvKernel;
          c.op_type = "Gemm";
          c.seed = seed;
          c.tolerance = ToleranceFor(k);
          c.label = "Gemm M" + std::to_string(m) + " K" + std::to_string(k) + " N" +
                    std::to_string(n) + (trans_b ? " transB" : "") + " alpha " +
                    std::to_string(alpha) + " beta " + std::to_string(beta) + " C rank " +
                    std::to_string(bias_rank);
          c.attributes = {Attribute::Int("transB", trans_b ? 1 : 0),
                          Attribute::Float("alpha", alpha), Attribute::Float("beta", beta)};
          c.inputs = {Dynamic(RandomTensor({m, k}, rng)),
                      Constant(RandomTensor(
                          trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, rng))};
          if (bias_rank == 1) c.inputs.push_back(Constant(RandomTensor({n}, rng)));
          if (bias_rank == 2) c.inputs.push_back(Constant(RandomTensor({1, n}, rng)));
          EXPECT_TRUE(CheckKernel(c));
        }
      }
    }
  }
}

TEST(NativeGemv, LeavesMatrixProductsAndRunTimeOperandsToOthers) {
  const uint32_t seed = TestSeed(6105);
  std::mt19937 rng(seed);
  auto declined = [&](KernelCase c, const std::string& why) {
    c.label += " (" + why + ")";
    c.expect = Expect::kNotApplicable;
    return c;
  };
  EXPECT_TRUE(CheckKernel(declined(MatMulCase({5, 17}, 33, rng, seed), "5 rows")));
  EXPECT_TRUE(CheckKernel(declined(MatMulCase({2, 3, 17}, 33, rng, seed), "6 rows")));
  KernelCase dynamic_b = MatMulCase({1, 17}, 33, rng, seed);
  dynamic_b.inputs[1].constant = false;
  EXPECT_TRUE(CheckKernel(declined(dynamic_b, "B computed at run time")));

  KernelCase full_c;
  full_c.factory = &CreateNativeGemvKernel;
  full_c.op_type = "Gemm";
  full_c.seed = seed;
  full_c.label = "Gemm";
  full_c.inputs = {Dynamic(RandomTensor({2, 7}, rng)), Constant(RandomTensor({7, 5}, rng)),
                   Constant(RandomTensor({2, 5}, rng))};
  EXPECT_TRUE(CheckKernel(declined(full_c, "C [M,N]")));
  KernelCase trans_a = full_c;
  trans_a.inputs = {Dynamic(RandomTensor({7, 1}, rng)), Constant(RandomTensor({7, 5}, rng))};
  trans_a.attributes = {Attribute::Int("transA", 1)};
  EXPECT_TRUE(CheckKernel(declined(trans_a, "transA")));
}

// The packed loops alone: every ISA this CPU has, 1 and 2 threads, against a product in
// double, with NaN-filled outputs framed by sentinels.
TEST(NativeGemvPacked, EveryIsaAndThreadCountWritesExactlyTheOutput) {
  const uint32_t seed = TestSeed(6106);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  constexpr int64_t kGuard = 32;
  constexpr float kSentinel = -12345.0f;
  int checked = 0;
  for (GemvIsa isa : {GemvIsa::kAvx512, GemvIsa::kAvx2}) {
    if (!GemvIsaSupported(isa)) continue;
    for (int threads : {1, 2}) {
      for (int64_t n : {1, 63, 64, 65, 255, 2049}) {
        for (int64_t rows = 1; rows <= 4; ++rows) {
          const int64_t k = kSizes[rng() % std::size(kSizes)];
          const bool transposed = rng() % 2 == 0;
          const bool relu = rng() % 2 == 0;
          std::vector<float> w(k * n), x(rows * k), bias(n);
          for (float& v : w) v = dist(rng);
          for (float& v : x) v = dist(rng);
          for (float& v : bias) v = dist(rng);
          auto packed = PackedGemvWeights::Pack(w.data(), k, n, transposed, 0.5f);
          ASSERT_TRUE(packed.ok()) << packed.status().ToString();
          std::vector<float> y(rows * n + 2 * kGuard, kSentinel);
          std::fill(y.begin() + kGuard, y.end() - kGuard, std::nanf(""));
          GemvOptions options;
          options.bias = bias.data();
          options.relu = relu;
          options.threads = threads;
          options.isa = isa;
          RunGemv(**packed, x.data(), rows, y.data() + kGuard, options);
          const std::string what = std::string(GemvIsaName(isa)) + " threads " +
                                   std::to_string(threads) + " rows " + std::to_string(rows) +
                                   " K" + std::to_string(k) + " N" + std::to_string(n) +
                                   (transposed ? " transposed" : "") + (relu ? " relu" : "") +
                                   " seed " + std::to_string(seed);
          for (int64_t i = 0; i < kGuard; ++i) {
            ASSERT_EQ(y[i], kSentinel) << what << ": wrote before the output";
            ASSERT_EQ(y[kGuard + rows * n + i], kSentinel) << what << ": wrote past the output";
          }
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < n; ++c) {
              double want = bias[c];
              for (int64_t kk = 0; kk < k; ++kk) {
                want += 0.5 * x[r * k + kk] * (transposed ? w[c * k + kk] : w[kk * n + c]);
              }
              if (relu) want = std::max(want, 0.0);
              const float got = y[kGuard + r * n + c];
              ASSERT_FALSE(std::isnan(got))
                  << what << ": element " << r << "," << c << " never written";
              ASSERT_NEAR(got, want, 1e-4 * (1 + std::sqrt(static_cast<double>(k))))
                  << what << " at " << r << "," << c;
            }
          }
          ++checked;
        }
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2 with FMA";
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
