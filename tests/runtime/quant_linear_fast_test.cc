// Fast QuantizeLinear / DequantizeLinear (quant_elementwise.cc) against the reference tier,
// bit for bit: per tensor in every layout, per channel (axis 1 of rank 4) in plain and
// nhwc, ties, saturation, NaN and infinities, odd sizes, two threads; and the variants the
// fast tier leaves to the reference (float8, other axes, rank-2 per-axis).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/quant_math.h"
#include "runtime/kernel_test_util.h"
#include "runtime/quant_test_tensors.h"

namespace qtune::runtime::kernel_testing {
namespace {

constexpr DataType kU8 = DataType::kUint8;
constexpr DataType kS8 = DataType::kInt8;

const std::vector<std::vector<int64_t>> kShapes = {
    {1, 3, 5, 7}, {2, 17, 3, 3}, {1, 1, 1, 1}, {1, 33, 15, 1}, {3, 5, 2, 31}};

struct LinearCase {
  bool quantize = true;
  DataType q_type = kU8;  // y's type (Quantize) or x's (Dequantize)
  std::vector<int64_t> sizes;
  bool per_channel = false;
  bool with_zero_point = true;
  Layout layout = Layout::kPlain;
  int64_t axis = 1;
};

std::string Describe(const LinearCase& s) {
  return std::string(s.quantize ? "Quantize " : "Dequantize ") +
         std::string(DataTypeName(s.q_type)) + " " + SizesString(s.sizes) +
         (s.per_channel ? " per-channel axis " + std::to_string(s.axis) : " per-tensor") +
         (s.with_zero_point ? "" : " no zero point") + " " + LayoutName(s.layout);
}

// Scales of either granularity; `tie_friendly` makes them powers of two so that x / scale
// lands on halves often.
Tensor Scales(int64_t count, bool per_channel, bool tie_friendly, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(0.005f, 0.05f);
  std::vector<float> v(count);
  for (float& s : v) s = tie_friendly ? 0.25f : dist(rng);
  return per_channel ? Tensor::FromVector<float>({count}, v) : Tensor::Scalar<float>(v[0]);
}

Tensor ZeroPoints(DataType dtype, int64_t count, bool per_channel, std::mt19937& rng) {
  auto t =
      Tensor::Allocate(dtype, per_channel ? std::vector<int64_t>{count} : std::vector<int64_t>{});
  QTUNE_CHECK(t.ok());
  std::uniform_int_distribution<int> dist(-20, 20);
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    int v = dist(rng);
    if (dtype == kU8) t->data<uint8_t>()[i] = static_cast<uint8_t>(128 + v);
    if (dtype == kS8) t->data<int8_t>()[i] = static_cast<int8_t>(v);
    if (dtype == DataType::kInt32) t->data<int32_t>()[i] = 0;  // ONNX: int32 has none
  }
  return *std::move(t);
}

// float x in [-4, 4) in steps of 1/8 (many exact ties against 0.25 scales), with NaN and
// infinities sprinkled in.
Tensor QuantizeInput(const std::vector<int64_t>& sizes, std::mt19937& rng) {
  Tensor x = RandomTensor(sizes, rng, -4.0f, 4.0f);
  float* p = x.data<float>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (i % 3 == 0) p[i] = std::round(p[i] * 8.0f) / 8.0f;
    if (i % 97 == 5) p[i] = std::numeric_limits<float>::quiet_NaN();
    if (i % 101 == 7) p[i] = (i % 2 ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity();
  }
  return x;
}

Tensor Int32Input(const std::vector<int64_t>& sizes, std::mt19937& rng) {
  auto t = Tensor::Allocate(DataType::kInt32, sizes);
  QTUNE_CHECK(t.ok());
  std::uniform_int_distribution<int32_t> dist(-1 << 24, 1 << 24);
  for (int32_t& v : t->span<int32_t>()) v = dist(rng);
  return *std::move(t);
}

KernelCase MakeLinearCase(const LinearCase& s, bool tie_friendly, std::mt19937& rng,
                          uint32_t seed) {
  KernelCase c;
  c.factory = &CreateQuantElementwiseKernel;
  c.op_type = s.quantize ? "QuantizeLinear" : "DequantizeLinear";
  c.opset = 19;
  c.tolerance = 0;  // bit for bit
  c.seed = seed;
  c.label = Describe(s) + (tie_friendly ? " scale 0.25" : "");
  c.attributes = {Attribute::Int("axis", s.axis)};
  const int64_t channels = s.per_channel ? s.sizes[s.axis < 0 ? s.axis + 4 : s.axis] : 1;
  Tensor x = s.quantize                     ? QuantizeInput(s.sizes, rng)
             : s.q_type == DataType::kInt32 ? Int32Input(s.sizes, rng)
                                            : RandomQuantTensor(s.q_type, s.sizes, rng);
  c.inputs = {Dynamic(x, s.layout), Constant(Scales(channels, s.per_channel, tie_friendly, rng))};
  if (s.with_zero_point) {
    c.inputs.push_back(Constant(ZeroPoints(s.q_type, channels, s.per_channel, rng)));
  }
  return c;
}

TEST(QuantizeLinearFast, PerTensorMatchesReference) {
  uint32_t seed = TestSeed(8201);
  std::mt19937 rng(seed);
  for (DataType q : {kU8, kS8}) {
    for (const auto& sizes : kShapes) {
      for (Layout layout : {Layout::kPlain, Layout::kNhwc}) {
        for (bool ties : {false, true}) {
          LinearCase s{.quantize = true, .q_type = q, .sizes = sizes, .layout = layout};
          EXPECT_TRUE(CheckKernel(MakeLinearCase(s, ties, rng, seed)));
        }
      }
    }
    for (const std::vector<int64_t>& sizes :
         std::vector<std::vector<int64_t>>{{1}, {17}, {3, 33}, {}}) {
      LinearCase s{.quantize = true, .q_type = q, .sizes = sizes};
      EXPECT_TRUE(CheckKernel(MakeLinearCase(s, true, rng, seed)));
    }
  }
  // No zero point: uint8 with zero point 0.
  LinearCase s{.quantize = true, .q_type = kU8, .sizes = {1, 3, 5, 7}, .with_zero_point = false};
  EXPECT_TRUE(CheckKernel(MakeLinearCase(s, false, rng, seed)));
}

// The AVX-512 path multiplies by 1/scale and divides only near a half-integer
// (quant_vector_math.h, QuotientToRound): values a few ulp either side of x/scale = k + 1/2
// for scales that are not powers of two, and exact ties, must round as x / scale does.
TEST(QuantizeLinearFast, NearTiesRoundAsTheQuotient) {
  uint32_t seed = TestSeed(8205);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale_dist(0.001f, 0.3f);
  std::uniform_int_distribution<int> k_dist(-140, 140);
  for (int trial = 0; trial < 40; ++trial) {
    const float scale = scale_dist(rng);
    Tensor x = *Tensor::Allocate(DataType::kFloat32, {1, 4, 16, 16});
    float* p = x.data<float>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      float v = (static_cast<float>(k_dist(rng)) + 0.5f) * scale;
      for (int step = static_cast<int>(rng() % 7) - 3; step != 0; step += step > 0 ? -1 : 1) {
        v = std::nextafter(v, step > 0 ? INFINITY : -INFINITY);
      }
      p[i] = v;
    }
    KernelCase c;
    c.factory = &CreateQuantElementwiseKernel;
    c.op_type = "QuantizeLinear";
    c.opset = 19;
    c.tolerance = 0;
    c.seed = seed;
    c.label = "near ties, scale " + std::to_string(scale);
    c.inputs = {Dynamic(x), Constant(Tensor::Scalar<float>(scale)),
                Constant(ZeroPoints(trial % 2 ? kS8 : kU8, 1, false, rng))};
    c.expect = Expect::kFastPath;
    EXPECT_TRUE(CheckKernel(c));
  }
}

TEST(QuantizeLinearFast, PerChannelMatchesReferenceInBothLayouts) {
  uint32_t seed = TestSeed(8202);
  std::mt19937 rng(seed);
  for (DataType q : {kU8, kS8}) {
    for (const auto& sizes : kShapes) {
      for (Layout layout : {Layout::kPlain, Layout::kNhwc}) {
        for (int64_t axis : {1, -3}) {
          LinearCase s{.quantize = true,
                       .q_type = q,
                       .sizes = sizes,
                       .per_channel = true,
                       .layout = layout,
                       .axis = axis};
          EXPECT_TRUE(CheckKernel(MakeLinearCase(s, false, rng, seed)));
        }
      }
    }
  }
}

TEST(DequantizeLinearFast, PerTensorAndPerChannelMatchReference) {
  uint32_t seed = TestSeed(8203);
  std::mt19937 rng(seed);
  for (DataType q : {kU8, kS8, DataType::kInt32}) {
    for (const auto& sizes : kShapes) {
      for (Layout layout : {Layout::kPlain, Layout::kNhwc}) {
        for (bool per_channel : {false, true}) {
          LinearCase s{.quantize = false,
                       .q_type = q,
                       .sizes = sizes,
                       .per_channel = per_channel,
                       .layout = layout};
          EXPECT_TRUE(CheckKernel(MakeLinearCase(s, false, rng, seed)));
        }
      }
    }
    LinearCase flat{.quantize = false, .q_type = q, .sizes = {5, 33}};
    EXPECT_TRUE(CheckKernel(MakeLinearCase(flat, false, rng, seed)));
    LinearCase no_zp{.quantize = false, .q_type = q, .sizes = {2, 3, 5}, .with_zero_point = false};
    EXPECT_TRUE(CheckKernel(MakeLinearCase(no_zp, false, rng, seed)));
  }
}

TEST(QuantizeLinearFast, AgreesWithQuantMathOnTies) {
  // The fast kernel's rounding trick against quant_math.h directly, on every half from
  // -300 to 300 and a few values around them.
  std::vector<float> values;
  for (int i = -600; i <= 600; ++i) {
    float half = static_cast<float>(i) * 0.5f;
    values.insert(values.end(), {half, std::nextafter(half, -1e9f), std::nextafter(half, 1e9f)});
  }
  values.insert(values.end(), {1e10f, -1e10f, 8388609.0f, -4194305.5f});
  const int64_t n = static_cast<int64_t>(values.size());
  for (DataType q : {kU8, kS8}) {
    KernelCase c;
    c.factory = &CreateQuantElementwiseKernel;
    c.op_type = "QuantizeLinear";
    c.tolerance = 0;
    c.label = "halves";
    c.inputs = {Dynamic(Tensor::FromVector<float>({n}, values)),
                Constant(Tensor::Scalar<float>(1.0f)), Constant(QuantScalar(q, q == kU8 ? 7 : -3))};
    EXPECT_TRUE(CheckKernel(c));
  }
}

TEST(QuantizeLinearFast, LargeTensorsOnOneAndTwoThreads) {
  uint32_t seed = TestSeed(8204);
  std::mt19937 rng(seed);
  for (const char* threads : {"1", "2"}) {
    setenv("QTUNE_KERNEL_TEST_THREADS", threads, 1);
    for (bool quantize : {true, false}) {
      for (bool per_channel : {false, true}) {
        for (Layout layout : {Layout::kPlain, Layout::kNhwc}) {
          LinearCase s{.quantize = quantize,
                       .q_type = kS8,
                       .sizes = {2, 64, 33, 35},
                       .per_channel = per_channel,
                       .layout = layout};
          KernelCase c = MakeLinearCase(s, false, rng, seed);
          c.label += std::string(" threads ") + threads;
          EXPECT_TRUE(CheckKernel(c));
        }
      }
    }
  }
  unsetenv("QTUNE_KERNEL_TEST_THREADS");
}

TEST(QuantizeLinearFast, LeavesOtherVariantsToTheReference) {
  uint32_t seed = TestSeed(8205);
  std::mt19937 rng(seed);
  // Per-axis on axis 0 and on a rank-2 value.
  LinearCase axis0{
      .quantize = true, .q_type = kU8, .sizes = {3, 4, 5, 6}, .per_channel = true, .axis = 0};
  KernelCase c = MakeLinearCase(axis0, false, rng, seed);
  c.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(c));
  LinearCase rank2{.quantize = false, .q_type = kS8, .sizes = {4, 5}, .per_channel = true};
  c = MakeLinearCase(rank2, false, rng, seed);
  c.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(c));
  // float8: reference tier only.
  for (DataType f8 : {DataType::kFloat8E4M3FN, DataType::kFloat8E5M2}) {
    auto zp = Tensor::Allocate(f8, {});
    QTUNE_CHECK(zp.ok());
    std::memset(zp->raw_data(), 0, zp->byte_size());
    KernelCase q;
    q.factory = &CreateQuantElementwiseKernel;
    q.op_type = "QuantizeLinear";
    q.opset = 19;
    q.expect = Expect::kNotApplicable;
    q.label = std::string("float8 ") + std::string(DataTypeName(f8));
    q.inputs = {Dynamic(RandomTensor({2, 3}, rng)), Constant(Tensor::Scalar<float>(0.5f)),
                Constant(*zp)};
    EXPECT_TRUE(CheckKernel(q));
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
