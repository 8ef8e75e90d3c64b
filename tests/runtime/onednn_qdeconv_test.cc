// qtune::QConvTranspose: the oneDNN int8 deconvolution against the reference (dequantize ->
// float ConvTranspose -> quantize) on seeded random problems (u8/s8 X, per-tensor and
// per-channel weight scales, bias or none, strides 1-2, pads, output_padding, groups,
// fused activations, quantized and float output), within 1 LSB; and the QDQ fusion of
// Q -> DQ -> ConvTranspose(DQ(W)) [-> Relu] -> Q -> DQ run by a Session against the unfused
// graph.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "ir/builder.h"
#include "runtime/fused_run.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/quant_test_util.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::quant_testing {
namespace {

using ir::Attribute;
using namespace qlinear;

struct DeconvSpec {
  int64_t n = 1, c_in = 8, c_out = 8, h = 5, w = 5, group = 1;
  std::vector<int64_t> kernel = {3, 3}, strides = {1, 1}, pads = {0, 0, 0, 0};
  std::vector<int64_t> output_padding = {0, 0};
  DataType x_type = DataType::kUint8;
  int32_t x_zero_point = 0;
  bool per_channel = true;
  bool bias = true;
  DataType y_type = DataType::kUint8;  // kFloat32: float output
  std::string activation;              // "" or a FusedConv activation
  std::vector<float> activation_params;
};

std::string Describe(const DeconvSpec& s) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "X %lldx%lldx%lldx%lld %s zp %d, C_out %lld group %lld, k %lldx%lld s %lldx%lld "
                "pads %lld,%lld,%lld,%lld out_pad %lld,%lld, %s%s%s -> %s",
                (long long)s.n, (long long)s.c_in, (long long)s.h, (long long)s.w,
                std::string(DataTypeName(s.x_type)).c_str(), s.x_zero_point, (long long)s.c_out,
                (long long)s.group, (long long)s.kernel[0], (long long)s.kernel[1],
                (long long)s.strides[0], (long long)s.strides[1], (long long)s.pads[0],
                (long long)s.pads[1], (long long)s.pads[2], (long long)s.pads[3],
                (long long)s.output_padding[0], (long long)s.output_padding[1],
                s.per_channel ? "per-channel " : "per-tensor ", s.bias ? "bias " : "",
                s.activation.empty() ? "no activation" : s.activation.c_str(),
                std::string(DataTypeName(s.y_type)).c_str());
  return buf;
}

struct DeconvCase {
  DeconvSpec spec;
  std::unique_ptr<ir::Graph> graph;
  const ir::Node* node = nullptr;
  std::vector<Tensor> inputs;  // quant_ops.h numbering
};

std::unique_ptr<ir::Graph> BuildNodeGraph(const DeconvSpec& s, const std::vector<Tensor>& inputs) {
  ir::GraphBuilder b(17);
  b.ImportOpset(kQtuneDomain, 1);
  std::vector<ir::Value*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    if (!inputs[i].is_valid()) {
      values.push_back(nullptr);
    } else if (i == kX) {
      values.push_back(b.Input(name, inputs[i].dtype(), inputs[i].sizes()));
    } else {
      values.push_back(b.Initializer(name, inputs[i]));
    }
  }
  ir::OpOptions options;
  options.name = "node";
  options.domain = kQtuneDomain;
  std::vector<Attribute> attributes = {
      Attribute::Ints("kernel_shape", s.kernel), Attribute::Ints("strides", s.strides),
      Attribute::Ints("pads", s.pads), Attribute::Ints("output_padding", s.output_padding),
      Attribute::Int("group", s.group)};
  if (!s.activation.empty()) {
    attributes.push_back(Attribute::String("activation", s.activation));
    attributes.push_back(Attribute::Floats("activation_params", s.activation_params));
  }
  b.Output(b.Op(kQConvTranspose, values, attributes, options));
  return b.Build();
}

StatusOr<Tensor> RunReferenceNode(const DeconvCase& c) {
  ReferenceKernel fn = ReferenceRegistry::Get().Find("qtune::QConvTranspose");
  if (fn == nullptr) return InternalError("no qtune::QConvTranspose reference");
  ASSIGN_OR_RETURN(std::vector<Tensor> out, fn(KernelArgs{*c.node, c.inputs, 17}));
  return out[0];
}

template <typename T>
Tensor RandomInts(std::mt19937& rng, std::vector<int64_t> sizes, int lo, int hi) {
  int64_t count = 1;
  for (int64_t d : sizes) count *= d;
  std::vector<T> values(count);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (T& v : values) v = static_cast<T>(dist(rng));
  return Tensor::FromVector<T>(std::move(sizes), values);
}

// Random X and W, then y_scale chosen from the float result so that it spans ~+-8 sigma.
StatusOr<DeconvCase> MakeCase(const DeconvSpec& s, std::mt19937& rng) {
  DeconvCase c;
  c.spec = s;
  c.inputs.resize(kYZeroPoint + 1);
  const bool u8 = s.x_type == DataType::kUint8;
  c.inputs[kX] = u8 ? RandomInts<uint8_t>(rng, {s.n, s.c_in, s.h, s.w}, 0, 255)
                    : RandomInts<int8_t>(rng, {s.n, s.c_in, s.h, s.w}, -128, 127);
  c.inputs[kXScale] = Tensor::Scalar<float>(0.02f);
  c.inputs[kXZeroPoint] = u8 ? Tensor::Scalar<uint8_t>(static_cast<uint8_t>(s.x_zero_point))
                             : Tensor::Scalar<int8_t>(static_cast<int8_t>(s.x_zero_point));
  // |w| <= 63 keeps the u8 x s8 pair sums exact on CPUs without an int8 dot product.
  c.inputs[kW] =
      RandomInts<int8_t>(rng, {s.c_in, s.c_out / s.group, s.kernel[0], s.kernel[1]}, -63, 63);
  const int64_t scales = s.per_channel ? s.c_out : 1;
  std::uniform_real_distribution<float> scale_dist(0.004f, 0.02f);
  std::vector<float> w_scale(scales);
  for (float& v : w_scale) v = scale_dist(rng);
  c.inputs[kWScale] =
      s.per_channel ? Tensor::FromVector<float>({scales}, w_scale) : Tensor::Scalar(w_scale[0]);
  c.inputs[kWZeroPoint] = s.per_channel
                              ? Tensor::FromVector<int8_t>({scales}, std::vector<int8_t>(scales, 0))
                              : Tensor::Scalar<int8_t>(0);
  if (s.bias) {
    std::normal_distribution<float> bias_dist(0.0f, 1.0f);
    std::vector<float> bias(s.c_out);
    for (float& v : bias) v = bias_dist(rng);
    c.inputs[kBias] = Tensor::FromVector<float>({s.c_out}, bias);
  }
  c.inputs.resize(kBias + 1);
  c.graph = BuildNodeGraph(s, c.inputs);
  c.node = c.graph->FindNode("node");
  ASSIGN_OR_RETURN(Tensor real, RunReferenceNode(c));
  if (s.y_type == DataType::kFloat32) return c;
  double sum = 0, sum2 = 0;
  for (float v : real.span<float>()) sum += v, sum2 += double{v} * v;
  const double count = static_cast<double>(real.num_elements());
  const double sigma = std::sqrt(std::max(1e-6, sum2 / count - (sum / count) * (sum / count)));
  c.inputs.resize(kYZeroPoint + 1);
  c.inputs[kYScale] = Tensor::Scalar<float>(static_cast<float>(sigma / 16));
  c.inputs[kYZeroPoint] =
      s.y_type == DataType::kUint8 ? Tensor::Scalar<uint8_t>(128) : Tensor::Scalar<int8_t>(-3);
  c.graph = BuildNodeGraph(s, c.inputs);
  c.node = c.graph->FindNode("node");
  return c;
}

// NCHW <-> NHWC for any element size.
Tensor Permute(const Tensor& src, bool to_nhwc) {
  const std::vector<int64_t>& s = src.sizes();
  const int64_t n = s[0], a = to_nhwc ? s[1] : s[3], h = to_nhwc ? s[2] : s[1],
                w = to_nhwc ? s[3] : s[2];  // a: channels
  std::vector<int64_t> out =
      to_nhwc ? std::vector<int64_t>{n, h, w, a} : std::vector<int64_t>{n, a, h, w};
  Tensor dst = *Tensor::Allocate(src.dtype(), out);
  const size_t e = src.byte_size() / src.num_elements();
  const auto* in = static_cast<const uint8_t*>(src.raw_data());
  auto* o = static_cast<uint8_t*>(dst.raw_data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < a; ++c)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t nchw = ((b * a + c) * h + y) * w + x, nhwc = ((b * h + y) * w + x) * a + c;
          std::memcpy(o + (to_nhwc ? nhwc : nchw) * e, in + (to_nhwc ? nchw : nhwc) * e, e);
        }
  return dst;
}

struct Outcome {
  bool applied = false;
  std::string kernel;
  Diff diff;
};

// The kernel on `c` (X in NHWC, output framed by sentinels) against the reference.
StatusOr<Outcome> RunCase(const DeconvCase& c) {
  ASSIGN_OR_RETURN(Tensor want, RunReferenceNode(c));
  std::vector<bool> constant(c.inputs.size(), true);
  constant[kX] = false;
  auto owned = MakeRequest(*c.node, c.inputs, constant, {MakeInfo(want.dtype(), want.sizes())},
                           Layout::kNhwc, 1);
  ASSIGN_OR_RETURN(std::optional<KernelChoice> choice, CreateOnednnQDeconvKernel(*owned->request));
  Outcome outcome;
  if (!choice) return outcome;
  outcome.applied = true;
  outcome.kernel = choice->kernel->Describe();
  if (choice->input_layouts[kX] != Layout::kNhwc || choice->output_layouts[0] != Layout::kNhwc) {
    return InternalError("expected NHWC X and Y");
  }
  std::vector<Tensor> inputs = c.inputs;
  inputs[kX] = Permute(c.inputs[kX], true);
  constexpr int64_t kGuard = 64;
  const int64_t bytes = static_cast<int64_t>(want.byte_size());
  Tensor storage = *Tensor::Allocate(DataType::kUint8, {bytes + 2 * kGuard});
  uint8_t* p = storage.data<uint8_t>();
  std::memset(p, 0xA5, storage.byte_size());
  const std::vector<int64_t>& y = want.sizes();
  std::vector<Tensor> outputs = {
      Tensor::Borrow(want.dtype(), {y[0], y[2], y[3], y[1]}, p + kGuard)};
  RETURN_IF_ERROR(choice->kernel->Run(inputs, outputs));
  for (int64_t i = 0; i < kGuard; ++i) {
    if (p[i] != 0xA5 || p[kGuard + bytes + i] != 0xA5) {
      return InternalError(outcome.kernel + " wrote outside its output");
    }
  }
  outcome.diff = CompareOutputs(Permute(outputs[0], false), want);
  return outcome;
}

void CheckCase(const DeconvSpec& s, std::mt19937& rng, uint32_t seed, int& declined) {
  SCOPED_TRACE(Describe(s) + " seed " + std::to_string(seed) + " (replay: QTUNE_TEST_SEED)");
  auto c = MakeCase(s, rng);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto run = RunCase(*c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  if (!run->applied) {
    std::printf("    declined: %s\n", Describe(s).c_str());
    ++declined;
    return;
  }
  const double allowed = s.y_type == DataType::kFloat32 ? 1e-5 : 1.0;
  EXPECT_LE(run->diff.max_error, allowed) << run->kernel << ": " << run->diff.first_mismatch;
}

TEST(OnednnQDeconv, RandomCasesMatchReferenceWithin1Lsb) {
  const uint32_t seed = TestSeed(6101);
  std::mt19937 rng(seed);
  int declined = 0, expected_declines = 0, zero_point_cases = 0;
  const int kCases = 100;
  for (int i = 0; i < kCases; ++i) {
    DeconvSpec s;
    s.n = 1 + rng() % 2;
    s.c_in = std::vector<int64_t>{1, 3, 8, 16, 17}[rng() % 5];
    s.c_out = std::vector<int64_t>{1, 5, 8, 16, 19}[rng() % 5];
    s.h = 1 + rng() % 9;
    s.w = 1 + rng() % 9;
    const int64_t k = std::vector<int64_t>{1, 2, 3, 4}[rng() % 4];
    s.kernel = {k, k};
    const int64_t stride = 1 + rng() % 2;
    s.strides = {stride, stride};
    for (int64_t& p : s.pads) p = static_cast<int64_t>(rng() % static_cast<uint32_t>(k));
    for (size_t d = 0; d < 2; ++d) {  // keep at least one output row and column
      const int64_t natural = ((d == 0 ? s.h : s.w) - 1) * stride + k;
      if (natural - s.pads[d] - s.pads[d + 2] < 1) s.pads[d] = s.pads[d + 2] = 0;
    }
    for (int64_t& p : s.output_padding)
      p = static_cast<int64_t>(rng() % static_cast<uint32_t>(stride));
    s.x_type = rng() % 2 ? DataType::kUint8 : DataType::kInt8;
    s.x_zero_point = rng() % 3 == 0 ? 0 : s.x_type == DataType::kUint8 ? 128 : -5;
    s.per_channel = rng() % 2;
    s.bias = rng() % 2;
    s.y_type =
        std::vector<DataType>{DataType::kUint8, DataType::kInt8, DataType::kFloat32}[rng() % 3];
    switch (rng() % 5) {
      case 1:
        s.activation = "Relu";
        break;
      case 2:
        s.activation = "LeakyRelu";
        s.activation_params = {0.1f};
        break;
      case 3:
        s.activation = "HardSwish";
        break;
      case 4:
        s.activation = "Sigmoid";
        break;
      default:
        break;
    }
    // output_padding beyond the end pad needs a negative oneDNN pad: declined, as in the
    // fp32 deconvolution kernel.
    const bool negative_pad = s.output_padding[0] > s.pads[2] || s.output_padding[1] > s.pads[3];
    expected_declines += negative_pad;
    const int before = declined;
    CheckCase(s, rng, seed, declined);
    EXPECT_EQ(declined > before, negative_pad) << Describe(s);
    zero_point_cases += s.x_zero_point != 0 && !negative_pad;
  }
  std::printf(
      "[ oneDNN QConvTranspose ] %d cases, %d declined (negative pads), %d run with a "
      "nonzero x zero point\n",
      kCases, declined, zero_point_cases);
  EXPECT_EQ(declined, expected_declines);
}

// The det head's shape: 2x upsampling with k 2 s 2, and k 3 s 2 pad 1 output_padding 1;
// and a grouped layer.
TEST(OnednnQDeconv, UpsamplingAndGroupedLayers) {
  const uint32_t seed = TestSeed(6102);
  std::mt19937 rng(seed);
  int declined = 0;
  DeconvSpec up;
  up.c_in = 24;
  up.c_out = 24;
  up.h = 10;
  up.w = 12;
  up.kernel = {2, 2};
  up.strides = {2, 2};
  CheckCase(up, rng, seed, declined);
  DeconvSpec padded = up;
  padded.kernel = {3, 3};
  padded.pads = {1, 1, 1, 1};
  padded.output_padding = {1, 1};
  padded.y_type = DataType::kFloat32;
  CheckCase(padded, rng, seed, declined);
  DeconvSpec grouped = up;
  grouped.group = 4;
  grouped.c_in = 16;
  grouped.c_out = 12;
  grouped.x_type = DataType::kInt8;
  grouped.y_type = DataType::kInt8;
  CheckCase(grouped, rng, seed, declined);
  EXPECT_EQ(declined, 0);
}

Tensor ScalarOf(DataType type, float v) {
  if (type == DataType::kUint8) return Tensor::Scalar<uint8_t>(static_cast<uint8_t>(v));
  if (type == DataType::kInt8) return Tensor::Scalar<int8_t>(static_cast<int8_t>(v));
  return Tensor::Scalar<float>(v);
}

// x -> Q -> DQ -> ConvTranspose(DQ(W), B) [-> Relu] -> Q -> DQ -> y.
std::unique_ptr<ir::Graph> BuildQdqGraph(bool per_channel, bool relu, std::mt19937& rng) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 8, 6, 5});
  auto quant = [&](ir::Value* v, DataType type, float scale, float zp) {
    ir::Value* s = b.Initializer(v->name() + "_s", ScalarOf(DataType::kFloat32, scale));
    ir::Value* z = b.Initializer(v->name() + "_z", ScalarOf(type, zp));
    ir::Value* q = b.Op("QuantizeLinear", {v, s, z});
    return b.Op("DequantizeLinear", {q, s, z});
  };
  ir::Value* in = quant(x, DataType::kUint8, 0.03f, 128);
  Tensor wq = RandomInts<int8_t>(rng, {8, 6, 3, 3}, -63, 63);
  std::vector<float> scales = {0.011f, 0.007f, 0.013f, 0.009f, 0.012f, 0.006f};
  ir::Value* w_scale = b.Initializer(
      "w_s", per_channel ? Tensor::FromVector<float>({6}, scales) : Tensor::Scalar(0.01f));
  ir::Value* w_zp =
      b.Initializer("w_z", per_channel ? Tensor::FromVector<int8_t>({6}, std::vector<int8_t>(6, 0))
                                       : Tensor::Scalar<int8_t>(0));
  ir::Value* w = b.Op("DequantizeLinear", {b.Initializer("w_q", wq), w_scale, w_zp},
                      {Attribute::Int("axis", 1)});
  ir::Value* bias = b.Initializer(
      "bias", Tensor::FromVector<float>({6}, {0.1f, -0.2f, 0.05f, 0.3f, -0.1f, 0.0f}));
  ir::Value* y = b.Op("ConvTranspose", {in, w, bias},
                      {Attribute::Ints("strides", {2, 2}), Attribute::Ints("pads", {1, 1, 1, 1}),
                       Attribute::Ints("output_padding", {1, 1})});
  if (relu) y = b.Op("Relu", {y});
  b.Output(quant(y, DataType::kUint8, 0.02f, 120));
  return b.Build();
}

TEST(OnednnQDeconv, QdqConvTransposeFusesAndMatchesTheUnfusedGraph) {
  const uint32_t seed = TestSeed(6103);
  for (auto [per_channel, relu] : {std::pair{false, false}, {true, false}, {true, true}}) {
    SCOPED_TRACE(std::string(per_channel ? "per-channel" : "per-tensor") + (relu ? " relu" : "") +
                 " seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::unique_ptr<ir::Graph> graph = BuildQdqGraph(per_channel, relu, rng);
    Tensor x = *Tensor::Allocate(DataType::kFloat32, {1, 8, 6, 5});
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& v : x.span<float>()) v = dist(rng);
    auto run = RunFusedAndReference(*graph, {{"x", x}});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ(run->ops["QConvTranspose"], 1) << run->plan;
    EXPECT_EQ(run->ops["ConvTranspose"], 0) << run->plan;
    EXPECT_EQ(run->ops["Relu"], 0) << run->plan;
    const Tensor& a = run->want[0].second;
    const Tensor& b = run->got[0].second;
    ASSERT_EQ(a.sizes(), b.sizes());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      ASSERT_LE(std::fabs(a.data<float>()[i] - b.data<float>()[i]), 0.02f * 1.001f)
          << "element " << i;
    }
  }
}

}  // namespace
}  // namespace qtune::runtime::quant_testing
