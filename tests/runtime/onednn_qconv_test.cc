// The oneDNN int8 QConv kernel against the integer reference: seeded random problems (u8/s8
// X, per-tensor/per-channel weight scales, bias or none, Sum int8/uint8/float/none, every
// activation, float output, groups, depthwise, strides, pads, dilation), an exhaustive
// grid of the attribute combinations on one geometry, and the requests it must decline.
// Quantized outputs must agree within 1 LSB; the share of bit-exact elements is printed.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "runtime/fusion/quant_ops.h"
#include "runtime/quant_test_util.h"

namespace qtune::runtime::quant_testing {
namespace {

using namespace qlinear;

// Tallies agreement over many cases and prints it at the end.
struct Tally {
  int64_t total = 0, exact = 0, cases = 0, declined = 0;
  std::map<std::string, int> kernels;
  void Print(const char* what) const {
    std::printf("[ %s ] %lld cases (%lld declined), %lld of %lld elements bit-exact (%.4f)\n", what,
                static_cast<long long>(cases), static_cast<long long>(declined),
                static_cast<long long>(exact), static_cast<long long>(total),
                total ? static_cast<double>(exact) / total : 0.0);
    for (const auto& [name, count] : kernels) std::printf("    %4d x %s\n", count, name.c_str());
  }
};

// Quantized Sum into a float output has no oneDNN equivalent (the reference runs).
// Every attribute combination has a oneDNN path (a quantized Sum into a float output is
// dequantized into dst first).
bool OnednnCanRun(const QSpec&) { return true; }

// Runs the kernel on `c` and checks it against the integer reference.
void CheckCase(const QCase& c, Tally& tally) {
  SCOPED_TRACE(c.label + " seed " + std::to_string(c.seed) + " (replay: QTUNE_TEST_SEED)");
  auto run = RunFast(c, &CreateOnednnQConvKernel, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ++tally.cases;
  if (!run->applied) {
    ++tally.declined;
    EXPECT_FALSE(OnednnCanRun(c.spec)) << "the kernel declined a case it should run";
    return;
  }
  ++tally.kernels[run->kernel_name];
  if (c.spec.sum != SumKind::kNone && c.spec.sum != SumKind::kFloat &&
      c.inputs[kSum].dtype() == run->output.dtype()) {
    EXPECT_EQ(run->inplace_input, static_cast<int>(kSum)) << "a matching Sum is offered in place";
  }
  auto want = RunIntegerReference(c);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  Diff d = CompareOutputs(run->output, *want);
  double allowed = c.spec.y_type == DataType::kFloat32 ? 1e-5 : 1.0;
  EXPECT_LE(d.max_error, allowed) << run->kernel_name << ": " << d.first_mismatch;
  if (c.spec.y_type != DataType::kFloat32) {  // bit-exactness is counted on integer outputs
    tally.total += d.total;
    tally.exact += d.exact;
  }
}

TEST(OnednnQConv, RandomCasesMatchIntegerReferenceWithin1Lsb) {
  uint32_t seed = TestSeed(5201);
  std::mt19937 rng(seed);
  Tally tally;
  for (int i = 0; i < 250; ++i) {
    QSpec spec = RandomSpec(rng, {.matmul = false, .weight_zero_points = false});
    CheckCase(MakeQCase(spec, rng, seed), tally);
  }
  tally.Print("oneDNN QConv vs integer reference, random");
}

// Every X type x output type x Sum kind x activation on one 3x3 geometry with odd channels.
TEST(OnednnQConv, EveryAttributeCombination) {
  uint32_t seed = TestSeed(5202);
  std::mt19937 rng(seed);
  Tally tally;
  for (DataType x : {DataType::kUint8, DataType::kInt8}) {
    for (DataType y : {DataType::kUint8, DataType::kInt8, DataType::kFloat32}) {
      for (SumKind sum : {SumKind::kNone, SumKind::kFloat, SumKind::kInt8, SumKind::kUint8}) {
        for (const char* act :
             {"", "Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSwish", "HardSigmoid", "Tanh"}) {
          QSpec s;
          s.n = 2;
          s.c_in = 17;
          s.c_out = 19;
          s.h = 7;
          s.w = 6;
          s.pads = {1, 1, 1, 1};
          s.x_type = x;
          s.y_type = y;
          s.sum = sum;
          s.activation = act;
          if (s.activation == "Clip") s.activation_params = {-1.5f, 2.5f};
          if (s.activation == "LeakyRelu") s.activation_params = {0.1f};
          s.per_channel = rng() % 2;
          s.bias = rng() % 2;
          if (rng() % 4 == 0) s.post_linear = {0.5f, 0.25f};
          CheckCase(MakeQCase(s, rng, seed), tally);
        }
      }
    }
  }
  tally.Print("oneDNN QConv vs integer reference, attribute grid");
}

// 1x1, depthwise, grouped, strided and dilated layers, and a clip with an infinite bound.
TEST(OnednnQConv, GeometryEdges) {
  uint32_t seed = TestSeed(5203);
  std::mt19937 rng(seed);
  Tally tally;
  auto base = [] {
    QSpec s;
    s.c_in = 16;
    s.c_out = 17;
    s.h = 9;
    s.w = 11;
    return s;
  };
  std::vector<QSpec> specs;
  QSpec one = base();
  one.kernel = {1, 1};
  specs.push_back(one);
  QSpec dw = base();
  dw.c_in = dw.c_out = dw.group = 17;
  dw.pads = {1, 1, 1, 1};
  specs.push_back(dw);
  QSpec dw_s2 = dw;
  dw_s2.strides = {2, 2};
  dw_s2.x_type = DataType::kInt8;
  specs.push_back(dw_s2);
  QSpec grouped = base();
  grouped.c_in = 12;
  grouped.c_out = 9;
  grouped.group = 3;
  grouped.auto_pad = "SAME_LOWER";
  grouped.strides = {2, 1};
  specs.push_back(grouped);
  QSpec dilated = base();
  dilated.dilations = {2, 2};
  dilated.kernel = {3, 3};
  dilated.auto_pad = "SAME_UPPER";
  specs.push_back(dilated);
  QSpec c3 = base();
  c3.c_in = 3;
  c3.c_out = 3;
  c3.kernel = {5, 3};
  c3.pads = {2, 0, 1, 2};
  specs.push_back(c3);
  QSpec half_clip = base();
  half_clip.activation = "Clip";
  half_clip.activation_params = {0.0f, INFINITY};
  specs.push_back(half_clip);
  for (QSpec s : specs) {
    for (DataType x : {DataType::kUint8, DataType::kInt8}) {
      s.x_type = x;
      s.sum = rng() % 2 ? SumKind::kNone : SumKind::kUint8;
      CheckCase(MakeQCase(s, rng, seed), tally);
    }
  }
  tally.Print("oneDNN QConv vs integer reference, geometry edges");
}

TEST(OnednnQConv, Uint8WeightsWithZeroPoint128RunAsSigned) {
  uint32_t seed = TestSeed(5204);
  std::mt19937 rng(seed);
  QSpec s;
  s.w_type = DataType::kUint8;  // MakeQCase gives u8 weights the zero point 128
  s.per_channel = false;
  QCase c = MakeQCase(s, rng, seed);
  Tally tally;
  CheckCase(c, tally);
  EXPECT_EQ(tally.declined, 0);
}

// A quantized Sum into a float output (the last residual block of a TensorRT-style QDQ
// ResNet): Sum is dequantized into dst, then a float sum post-op adds it.
TEST(OnednnQConv, QuantizedSumIntoFloatOutput) {
  uint32_t seed = TestSeed(5206);
  std::mt19937 rng(seed);
  for (SumKind sum : {SumKind::kInt8, SumKind::kUint8}) {
    QSpec f;
    f.y_type = DataType::kFloat32;
    f.sum = sum;
    Tally tally;
    CheckCase(MakeQCase(f, rng, seed), tally);
    EXPECT_EQ(tally.declined, 0);
  }
}

TEST(OnednnQConv, DeclinesWhatItCannotRunExactly) {
  uint32_t seed = TestSeed(5205);
  std::mt19937 rng(seed);
  QSpec s;
  // Weight zero points that push w - w_zp outside int8.
  s.w_type = DataType::kInt8;
  s.w_zero_points = true;
  QCase c = MakeQCase(s, rng, seed);
  c.inputs[kWZeroPoint] = Tensor::FromVector<int8_t>({s.c_out}, std::vector<int8_t>(s.c_out, 100));
  auto run = RunFast(c, &CreateOnednnQConvKernel, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(run->applied) << run->kernel_name;

  // A scale computed at run time.
  QCase dynamic = MakeQCase(QSpec{}, rng, seed);
  QGraph g = BuildGraph(dynamic);
  std::vector<bool> constant(dynamic.inputs.size(), true);
  constant[kX] = constant[kXScale] = false;
  auto want = RunIntegerReference(dynamic);
  ASSERT_TRUE(want.ok());
  auto owned = MakeRequest(*g.node, dynamic.inputs, constant,
                           {MakeInfo(want->dtype(), want->sizes())}, Layout::kNhwc, 1);
  auto choice = CreateOnednnQConvKernel(*owned->request);
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_FALSE(choice->has_value());

  // Other ops.
  QSpec m;
  m.matmul = true;
  auto other = RunFast(MakeQCase(m, rng, seed), &CreateOnednnQConvKernel, {});
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->applied);
}

// oneDNN 2.6.3's jit:avx512_core_amx_int8 gets the src zero-point compensation wrong at
// padded borders of a dilated kernel (off by ~40 LSB); the factory skips to the next
// implementation there. Pinned with and without dilation, Sum and zero point.
TEST(OnednnQConv, DilatedPaddedKernelWithSourceZeroPoint) {
  uint32_t seed = TestSeed(5206);
  Tally tally;
  for (int64_t dilation : {1, 2}) {
    for (SumKind sum : {SumKind::kNone, SumKind::kInt8}) {
      for (uint8_t zp : {0, 128}) {
        std::mt19937 rng(seed);
        QSpec s;
        s.c_in = 3;
        s.c_out = 1;
        s.h = 15;
        s.w = 7;
        s.kernel = {5, 3};
        s.strides = {1, 2};
        s.dilations = {dilation, 1};
        s.auto_pad = "SAME_UPPER";
        s.per_channel = false;
        s.bias = false;
        s.y_type = DataType::kInt8;
        s.sum = sum;
        QCase c = MakeQCase(s, rng, seed);
        c.inputs[kXZeroPoint] = Tensor::Scalar<uint8_t>(zp);
        c.label += " x_zp " + std::to_string(zp);
        CheckCase(c, tally);
      }
    }
  }
  EXPECT_EQ(tally.declined, 0);
  tally.Print("oneDNN QConv, dilated and padded with a src zero point");
}

}  // namespace
}  // namespace qtune::runtime::quant_testing
