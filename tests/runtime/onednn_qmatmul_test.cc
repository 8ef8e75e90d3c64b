// The oneDNN int8 QMatMul kernel against the integer reference: seeded random problems
// (u8/s8 A, rank 2 and 3, per-tensor/per-column weight scales, bias or none, every
// activation, u8/s8/float output, odd sizes), and the requests it must decline. Quantized
// outputs agree within 1 LSB; the share of bit-exact elements is printed.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "runtime/fusion/quant_ops.h"
#include "runtime/quant_test_util.h"

namespace qtune::runtime::quant_testing {
namespace {

using namespace qlinear;

TEST(OnednnQMatMul, RandomCasesMatchIntegerReferenceWithin1Lsb) {
  uint32_t seed = TestSeed(5401);
  std::mt19937 rng(seed);
  int64_t total = 0, exact = 0;
  std::map<std::string, int> kernels;
  for (int i = 0; i < 200; ++i) {
    QSpec spec = RandomSpec(rng, {.matmul = true, .weight_zero_points = false});
    if (i % 10 == 0) spec.activation = i % 20 ? "HardSigmoid" : "Tanh";
    if (i % 7 == 0) spec.post_linear = {-0.5f, 1.0f};
    QCase c = MakeQCase(spec, rng, seed);
    SCOPED_TRACE(c.label + " case " + std::to_string(i) + " seed " + std::to_string(seed));
    auto run = RunFast(c, &CreateOnednnQMatMulKernel, {});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_TRUE(run->applied) << "the kernel declined";
    ++kernels[run->kernel_name];
    auto want = RunIntegerReference(c);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    Diff d = CompareOutputs(run->output, *want);
    double allowed = spec.y_type == DataType::kFloat32 ? 1e-5 : 1.0;
    EXPECT_LE(d.max_error, allowed) << run->kernel_name << ": " << d.first_mismatch;
    if (spec.y_type != DataType::kFloat32) {  // bit-exactness is counted on integer outputs
      total += d.total;
      exact += d.exact;
    }
  }
  std::printf("[ oneDNN QMatMul vs integer reference ] %lld of %lld elements bit-exact (%.4f)\n",
              static_cast<long long>(exact), static_cast<long long>(total),
              static_cast<double>(exact) / total);
  for (const auto& [name, count] : kernels) std::printf("    %4d x %s\n", count, name.c_str());
}

TEST(OnednnQMatMul, TransformerSizedLayer) {
  uint32_t seed = TestSeed(5402);
  std::mt19937 rng(seed);
  QSpec s;
  s.matmul = true;
  s.h = 128;
  s.c_in = 768;
  s.c_out = 768;
  s.x_type = DataType::kUint8;
  s.y_type = DataType::kInt8;
  QCase c = MakeQCase(s, rng, seed);
  auto run = RunFast(c, &CreateOnednnQMatMulKernel, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->applied);
  auto want = RunIntegerReference(c);
  ASSERT_TRUE(want.ok());
  Diff d = CompareOutputs(run->output, *want);
  EXPECT_LE(d.max_error, 1.0) << d.first_mismatch;
  std::printf("[ QMatMul 128x768x768 ] %s: %.4f bit-exact\n", run->kernel_name.c_str(),
              static_cast<double>(d.exact) / d.total);
}

TEST(OnednnQMatMul, DeclinesWhatItCannotRunExactly) {
  uint32_t seed = TestSeed(5403);
  std::mt19937 rng(seed);
  QSpec s;
  s.matmul = true;
  s.w_type = DataType::kUint8;
  QCase c = MakeQCase(s, rng, seed);
  c.inputs[kWZeroPoint] = Tensor::Scalar<uint8_t>(0);  // u8 weights up to 255 do not fit s8
  auto run = RunFast(c, &CreateOnednnQMatMulKernel, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(run->applied) << run->kernel_name;

  QCase conv = MakeQCase(QSpec{}, rng, seed);
  auto other = RunFast(conv, &CreateOnednnQMatMulKernel, {});
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->applied);
}

TEST(OnednnQMatMul, Uint8WeightsWithZeroPoint128RunAsSigned) {
  uint32_t seed = TestSeed(5404);
  std::mt19937 rng(seed);
  QSpec s;
  s.matmul = true;
  s.w_type = DataType::kUint8;  // zero point 128
  s.per_channel = false;
  QCase c = MakeQCase(s, rng, seed);
  auto run = RunFast(c, &CreateOnednnQMatMulKernel, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->applied);
  auto want = RunIntegerReference(c);
  ASSERT_TRUE(want.ok());
  EXPECT_LE(CompareOutputs(run->output, *want).max_error, 1.0);
}

}  // namespace
}  // namespace qtune::runtime::quant_testing
