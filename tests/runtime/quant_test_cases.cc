// Random QConv/QMatMul problems for the quant tests (quant_test_util.h).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "runtime/fusion/quant_ops.h"
#include "runtime/quant_test_util.h"

namespace qtune::runtime::quant_testing {
namespace {

using namespace qlinear;

Tensor Allocated(DataType dtype, std::vector<int64_t> sizes) {
  auto t = Tensor::Allocate(dtype, std::move(sizes));
  QTUNE_CHECK(t.ok());
  return *std::move(t);
}

int32_t TypeMin(DataType t) { return t == DataType::kInt8 ? -128 : 0; }
int32_t TypeMax(DataType t) { return t == DataType::kInt8 ? 127 : 255; }

int32_t UniformInt(std::mt19937& rng, int32_t lo, int32_t hi) {
  return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
}
float UniformFloat(std::mt19937& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}

Tensor IntTensor(DataType type, std::vector<int64_t> sizes, const std::vector<int32_t>& v) {
  Tensor t = Allocated(type, std::move(sizes));
  for (size_t i = 0; i < v.size(); ++i) {
    if (type == DataType::kInt8) {
      t.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
    } else {
      t.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
    }
  }
  return t;
}

Tensor RandomInts(DataType type, std::vector<int64_t> sizes, std::mt19937& rng, int32_t lo,
                  int32_t hi) {
  int64_t n = 1;
  for (int64_t d : sizes) n *= d;
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = UniformInt(rng, lo, hi);
  return IntTensor(type, std::move(sizes), v);
}

// A zero point for a tensor of `type`: 0, the middle, or a random value near the middle.
int32_t RandomZeroPoint(DataType type, std::mt19937& rng) {
  int32_t mid = type == DataType::kInt8 ? 0 : 128;
  switch (UniformInt(rng, 0, 2)) {
    case 0:
      return 0;
    case 1:
      return mid;
    default:
      return std::clamp(mid + UniformInt(rng, -40, 40), TypeMin(type), TypeMax(type));
  }
}

Tensor ScalarOf(DataType type, int32_t v) { return IntTensor(type, {}, {v}); }

// Rank-4 layout change of any element type: [N,C,H,W] <-> [N,H,W,C].
}  // namespace

std::string Describe(const QSpec& s) {
  auto list = [](const std::vector<int64_t>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
    return out;
  };
  std::ostringstream d;
  d << (s.matmul ? "QMatMul" : "QConv") << " N" << s.n << " Cin" << s.c_in << " Cout" << s.c_out
    << " " << s.h << "x" << s.w;
  if (!s.matmul) {
    d << " k" << list(s.kernel) << " s" << list(s.strides) << " d" << list(s.dilations) << " g"
      << s.group;
    if (!s.pads.empty()) d << " pads" << list(s.pads);
    if (!s.auto_pad.empty()) d << " " << s.auto_pad;
  }
  d << " x:" << DataTypeName(s.x_type) << " w:" << DataTypeName(s.w_type)
    << (s.w_zero_points ? "+zp" : "") << (s.per_channel ? " per-channel" : " per-tensor")
    << (s.bias ? " bias" : "") << " y:" << DataTypeName(s.y_type);
  const char* sums[] = {"", " sum:f32", " sum:s8", " sum:u8"};
  d << sums[static_cast<int>(s.sum)];
  if (!s.activation.empty()) d << " " << s.activation;
  if (!s.post_linear.empty()) d << " post_linear";
  return d.str();
}

QSpec RandomSpec(std::mt19937& rng, const RandomSpecOptions& options) {
  auto pick = [&](std::vector<int64_t> v) { return v[UniformInt(rng, 0, int32_t(v.size()) - 1)]; };
  QSpec s;
  s.matmul = options.matmul;
  s.n = pick({1, 2});
  s.x_type = rng() % 2 ? DataType::kUint8 : DataType::kInt8;
  s.w_type = options.weight_zero_points && rng() % 2 ? DataType::kUint8 : DataType::kInt8;
  s.w_zero_points = options.weight_zero_points && rng() % 2;
  s.per_channel = rng() % 2;
  s.bias = rng() % 3 != 0;
  const DataType y_types[] = {DataType::kUint8, DataType::kInt8, DataType::kFloat32};
  s.y_type = y_types[UniformInt(rng, 0, 2)];
  const char* activations[] = {"", "Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSwish"};
  s.activation = activations[UniformInt(rng, 0, 5)];
  if (s.activation == "Clip")
    s.activation_params = {UniformFloat(rng, -3, 0), UniformFloat(rng, 1, 6)};
  if (s.activation == "LeakyRelu") s.activation_params = {UniformFloat(rng, 0.01f, 0.3f)};
  if (s.matmul) {
    s.c_in = pick({1, 3, 16, 17, 64, 100});
    s.c_out = pick({1, 3, 16, 17, 64});
    s.h = pick({1, 3, 7, 33});
    return s;
  }
  const SumKind sums[] = {SumKind::kNone, SumKind::kFloat, SumKind::kInt8, SumKind::kUint8};
  s.sum = sums[UniformInt(rng, 0, 3)];
  switch (UniformInt(rng, 0, 3)) {
    case 0:  // grouped
      s.group = pick({2, 3});
      s.c_in = s.group * pick({1, 3, 5});
      s.c_out = s.group * pick({1, 2, 5});
      break;
    case 1:  // depthwise (with a channel multiplier sometimes)
      s.c_in = s.group = pick({3, 16, 17});
      s.c_out = s.c_in * pick({1, 1, 2});
      break;
    default:
      s.c_in = pick({1, 3, 8, 17, 32});
      s.c_out = pick({1, 3, 16, 17, 32});
  }
  int64_t k = pick({1, 3, 3, 5});
  s.kernel = {k, k == 5 ? 3 : k};
  s.strides = {pick({1, 2}), pick({1, 2})};
  s.dilations = {pick({1, 1, 2}), 1};
  switch (UniformInt(rng, 0, 3)) {
    case 0:
      s.auto_pad = rng() % 2 ? "SAME_UPPER" : "SAME_LOWER";
      break;
    case 1:
      break;  // no padding
    default:
      s.pads = {pick({0, 1, 2}), pick({0, 1}), pick({0, 1, 2}), pick({0, 1})};
  }
  s.h = pick({5, 7, 12}) + (k - 1) * s.dilations[0];
  s.w = pick({5, 6, 9}) + (s.kernel[1] - 1);
  return s;
}

QCase MakeQCase(const QSpec& s, std::mt19937& rng, uint32_t seed) {
  QCase c;
  c.spec = s;
  c.seed = seed;
  c.label = Describe(s);
  const int64_t k = s.matmul ? s.c_in : s.c_in / s.group * s.kernel[0] * s.kernel[1];
  std::vector<int64_t> x_sizes = s.matmul ? (s.n > 1 ? std::vector<int64_t>{s.n, s.h, s.c_in}
                                                     : std::vector<int64_t>{s.h, s.c_in})
                                          : std::vector<int64_t>{s.n, s.c_in, s.h, s.w};
  std::vector<int64_t> w_sizes =
      s.matmul ? std::vector<int64_t>{s.c_in, s.c_out}
               : std::vector<int64_t>{s.c_out, s.c_in / s.group, s.kernel[0], s.kernel[1]};
  c.inputs.resize(9);  // Sum (9..11) is added last
  float x_scale = UniformFloat(rng, 0.01f, 0.05f);
  c.inputs[kX] = RandomInts(s.x_type, x_sizes, rng, TypeMin(s.x_type), TypeMax(s.x_type));
  c.inputs[kXScale] = Tensor::Scalar<float>(x_scale);
  c.inputs[kXZeroPoint] = ScalarOf(s.x_type, RandomZeroPoint(s.x_type, rng));
  // Weights: symmetric s8 without zero points; otherwise zero points near the middle.
  int64_t channels = s.per_channel ? s.c_out : 1;
  std::vector<int32_t> w_zp(s.w_zero_points ? channels : 1, 0);
  if (s.w_zero_points) {
    for (int32_t& z : w_zp) z = (s.w_type == DataType::kUint8 ? 128 : 0) + UniformInt(rng, -20, 20);
  } else if (s.w_type == DataType::kUint8) {
    std::fill(w_zp.begin(), w_zp.end(), 128);  // u8 weights need a zero point to be signed
  }
  c.inputs[kW] = s.w_type == DataType::kInt8 && !s.w_zero_points
                     ? RandomInts(s.w_type, w_sizes, rng, -127, 127)
                     : RandomInts(s.w_type, w_sizes, rng, TypeMin(s.w_type), TypeMax(s.w_type));
  // The pre-activation value (x - x_zp)(w - w_zp) summed over k terms has std ~74*74*sqrt(k).
  float w_base = 4.0f / (x_scale * 74.0f * 74.0f * std::sqrt(static_cast<float>(k)));
  std::vector<float> w_scale(channels);
  for (float& v : w_scale) v = w_base * UniformFloat(rng, 0.5f, 1.5f);
  c.inputs[kWScale] = s.per_channel ? Tensor::FromVector<float>({channels}, w_scale)
                                    : Tensor::Scalar<float>(w_scale[0]);
  c.inputs[kWZeroPoint] =
      w_zp.size() == 1 ? ScalarOf(s.w_type, w_zp[0]) : IntTensor(s.w_type, {channels}, w_zp);
  if (s.bias) {
    std::vector<float> b(s.c_out);
    for (float& v : b) v = UniformFloat(rng, -4.0f, 4.0f);
    c.inputs[kBias] = Tensor::FromVector<float>({s.c_out}, b);
  }
  if (s.y_type != DataType::kFloat32) {
    bool sigmoid = s.activation == "Sigmoid" || s.activation == "HardSigmoid";
    c.inputs[kYScale] =
        Tensor::Scalar<float>(sigmoid ? 1.0f / 250 : UniformFloat(rng, 0.04f, 0.08f));
    c.inputs[kYZeroPoint] = ScalarOf(s.y_type, RandomZeroPoint(s.y_type, rng));
  }
  if (!s.matmul) {
    c.attributes = {
        ir::Attribute::Ints("kernel_shape", s.kernel), ir::Attribute::Ints("strides", s.strides),
        ir::Attribute::Ints("dilations", s.dilations), ir::Attribute::Int("group", s.group)};
    if (!s.pads.empty()) c.attributes.push_back(ir::Attribute::Ints("pads", s.pads));
    if (!s.auto_pad.empty()) c.attributes.push_back(ir::Attribute::String("auto_pad", s.auto_pad));
  }
  if (!s.activation.empty()) {
    c.attributes.push_back(ir::Attribute::String("activation", s.activation));
    if (!s.activation_params.empty()) {
      c.attributes.push_back(ir::Attribute::Floats("activation_params", s.activation_params));
    }
  }
  if (!s.post_linear.empty()) {
    c.attributes.push_back(ir::Attribute::Floats("post_linear", s.post_linear));
  }
  if (s.sum != SumKind::kNone) {
    // Sum has the output's sizes: ask the reference without it.
    auto y = RunIntegerReference(c);
    QTUNE_CHECK(y.ok());
    const std::vector<int64_t>& sizes = y->sizes();
    c.inputs.resize(s.sum == SumKind::kFloat ? 10 : 12);
    if (s.sum == SumKind::kFloat) {
      Tensor f = Allocated(DataType::kFloat32, sizes);
      for (float& v : f.span<float>()) v = UniformFloat(rng, -7.0f, 7.0f);
      c.inputs[kSum] = f;
    } else {
      DataType t = s.sum == SumKind::kInt8 ? DataType::kInt8 : DataType::kUint8;
      c.inputs[kSum] = RandomInts(t, sizes, rng, TypeMin(t), TypeMax(t));
      c.inputs[kSumScale] = Tensor::Scalar<float>(UniformFloat(rng, 0.03f, 0.07f));
      c.inputs[kSumZeroPoint] = ScalarOf(t, RandomZeroPoint(t, rng));
    }
  }
  return c;
}

}  // namespace qtune::runtime::quant_testing
