// The oneDNN int8 QConv kernel on real layers (resnet18's first convolution and a 3x3
// 64->64 at 56x56 with a residual Sum; the ResNet-18 of util/test_models.h, He-initialized
// random weights with its BatchNormalization folded in, as an exporter folds it) and
// its speed against the fp32 FusedConv kernel (printed, never asserted: the machine is
// shared).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/quant_test_util.h"
#include "util/test_models.h"

namespace qtune::runtime::quant_testing {
namespace {

using namespace qlinear;

// The weights and bias of the `index`-th Conv of resnet18 whose weight has `w_sizes`, with
// the BatchNormalization that follows it folded in.
struct FloatLayer {
  Tensor w, b;
  std::vector<int64_t> pads, strides;
};

// w *= gamma / sqrt(var + eps) per output channel; b = beta - mean * gamma / sqrt(var + eps).
void FoldBatchNorm(const ir::Node& bn, FloatLayer& l) {
  auto param = [&](int i) { return bn.input(i)->initializer().data<float>(); };
  const float eps = bn.GetFloat("epsilon", 1e-5f);
  const int64_t c_out = l.w.size(0), per = l.w.num_elements() / c_out;
  l.w = l.w.Clone();
  l.b = *Tensor::Allocate(DataType::kFloat32, {c_out});
  for (int64_t o = 0; o < c_out; ++o) {
    float scale = param(1)[o] / std::sqrt(param(4)[o] + eps);
    for (int64_t i = 0; i < per; ++i) l.w.data<float>()[o * per + i] *= scale;
    l.b.data<float>()[o] = param(2)[o] - param(3)[o] * scale;
  }
}

std::optional<FloatLayer> FindResnetConv(const std::vector<int64_t>& w_sizes, int index) {
  static std::unique_ptr<ir::Graph> graph = testing::BuildTestResNet18();
  for (ir::Node* node : graph->nodes()) {
    if (node->op_type() != "Conv" || node->input(1) == nullptr ||
        !node->input(1)->is_initializer() || node->input(1)->initializer().sizes() != w_sizes) {
      continue;
    }
    if (index-- > 0) continue;
    FloatLayer l;
    l.w = node->input(1)->initializer();
    if (node->input(2) != nullptr && node->input(2)->is_initializer()) {
      l.b = node->input(2)->initializer();
    }
    l.pads = node->GetInts("pads", {0, 0, 0, 0});
    l.strides = node->GetInts("strides", {1, 1});
    const auto& uses = node->output(0)->uses();
    if (uses.size() == 1 && uses[0].node->op_type() == "BatchNormalization") {
      FoldBatchNorm(*uses[0].node, l);
    }
    return l;
  }
  return std::nullopt;
}

// A QConv case with `layer`'s weights quantized per channel (symmetric s8), X u8 drawn at
// random, the output u8 (ReLU, y_scale fitted to the float output's range).
QCase RealLayerCase(const FloatLayer& layer, std::vector<int64_t> x_sizes, bool residual,
                    std::mt19937& rng, uint32_t seed) {
  QCase c;
  const int64_t c_out = layer.w.size(0);
  const int64_t per = layer.w.num_elements() / c_out;
  c.spec.c_in = x_sizes[1];
  c.spec.c_out = c_out;
  c.spec.h = x_sizes[2];
  c.spec.w = x_sizes[3];
  c.spec.kernel = {layer.w.size(2), layer.w.size(3)};
  c.label = "resnet18 conv " + std::to_string(layer.w.size(2)) + "x" +
            std::to_string(layer.w.size(3)) + " " + std::to_string(c.spec.c_in) + "->" +
            std::to_string(c_out);
  c.seed = seed;
  c.attributes = {
      ir::Attribute::Ints("kernel_shape", c.spec.kernel), ir::Attribute::Ints("pads", layer.pads),
      ir::Attribute::Ints("strides", layer.strides), ir::Attribute::String("activation", "Relu")};
  c.inputs.resize(residual ? 12 : 9);
  Tensor x = *Tensor::Allocate(DataType::kUint8, x_sizes);
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t& v : x.span<uint8_t>()) v = static_cast<uint8_t>(byte(rng));
  c.inputs[kX] = x;
  c.inputs[kXScale] = Tensor::Scalar<float>(residual ? 0.02f : 4.8f / 255);
  c.inputs[kXZeroPoint] = Tensor::Scalar<uint8_t>(residual ? 0 : 117);
  Tensor w = *Tensor::Allocate(DataType::kInt8, layer.w.sizes());
  std::vector<float> scales(c_out);
  for (int64_t o = 0; o < c_out; ++o) {
    float max_abs = 1e-8f;
    for (int64_t i = 0; i < per; ++i)
      max_abs = std::max(max_abs, std::fabs(layer.w.data<float>()[o * per + i]));
    scales[o] = max_abs / 127;
    for (int64_t i = 0; i < per; ++i) {
      w.data<int8_t>()[o * per + i] =
          static_cast<int8_t>(std::nearbyint(layer.w.data<float>()[o * per + i] / scales[o]));
    }
  }
  c.inputs[kW] = w;
  c.inputs[kWScale] = Tensor::FromVector<float>({c_out}, scales);
  c.inputs[kWZeroPoint] = Tensor::Scalar<int8_t>(0);
  if (layer.b.is_valid()) c.inputs[kBias] = layer.b;
  // Fit y_scale to the float output (no Sum yet) so the u8 output uses its range.
  QCase probe = c;
  probe.inputs.resize(9);
  auto real = RunIntegerReference(probe);
  QTUNE_CHECK(real.ok());
  float max_out = 1e-3f;
  for (float v : real->span<float>()) max_out = std::max(max_out, v);
  c.inputs[kYScale] = Tensor::Scalar<float>(max_out / 255);
  c.inputs[kYZeroPoint] = Tensor::Scalar<uint8_t>(0);
  if (residual) {
    Tensor sum = *Tensor::Allocate(DataType::kUint8, real->sizes());
    for (uint8_t& v : sum.span<uint8_t>()) v = static_cast<uint8_t>(byte(rng) / 2);
    c.inputs[kSum] = sum;
    c.inputs[kSumScale] = Tensor::Scalar<float>(max_out / 255);
    c.inputs[kSumZeroPoint] = Tensor::Scalar<uint8_t>(0);
  }
  return c;
}

void CheckRealLayer(const QCase& c) {
  auto run = RunFast(c, &CreateOnednnQConvKernel, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->applied) << c.label << ": the oneDNN kernel declined";
  auto want = RunIntegerReference(c);
  ASSERT_TRUE(want.ok());
  Diff d = CompareOutputs(run->output, *want);
  EXPECT_LE(d.max_error, 1.0) << c.label << " " << run->kernel_name << ": " << d.first_mismatch;
  auto composed = RunFloatComposition(c);
  ASSERT_TRUE(composed.ok());
  Diff f = CompareOutputs(*want, *composed);
  EXPECT_LE(f.max_error, 1.0) << c.label << " reference vs float: " << f.first_mismatch;
  std::printf("[ real layer ] %s on %s: %lld of %lld bit-exact (%.4f); reference vs float %.4f\n",
              c.label.c_str(), run->kernel_name.c_str(), static_cast<long long>(d.exact),
              static_cast<long long>(d.total), static_cast<double>(d.exact) / d.total,
              static_cast<double>(f.exact) / f.total);
}

TEST(OnednnQConvLayers, Resnet18FirstConv) {
  auto layer = FindResnetConv({64, 3, 7, 7}, 0);
  ASSERT_TRUE(layer.has_value()) << "no 7x7 3->64 Conv in resnet18";
  std::mt19937 rng(TestSeed(5301));
  CheckRealLayer(RealLayerCase(*layer, {1, 3, 224, 224}, /*residual=*/false, rng, 5301));
}

TEST(OnednnQConvLayers, Resnet18Conv3x3At56WithResidualSum) {
  auto layer = FindResnetConv({64, 64, 3, 3}, 1);
  ASSERT_TRUE(layer.has_value()) << "no second 3x3 64->64 Conv in resnet18";
  std::mt19937 rng(TestSeed(5302));
  CheckRealLayer(RealLayerCase(*layer, {1, 64, 56, 56}, /*residual=*/true, rng, 5302));
}

// fp32 FusedConv (bias + Relu) at 1 thread on the same problem, in ms.
double Fp32Millis(int64_t c, int64_t hw, std::mt19937& rng) {
  ir::GraphBuilder b(17);
  b.ImportOpset(kQtuneDomain, 1);
  std::uniform_real_distribution<float> dist(-1, 1);
  Tensor x = *Tensor::Allocate(DataType::kFloat32, {1, c, hw, hw});
  Tensor w = *Tensor::Allocate(DataType::kFloat32, {c, c, 3, 3});
  Tensor bias = *Tensor::Allocate(DataType::kFloat32, {c});
  for (Tensor* t : {&x, &w, &bias}) {
    for (float& v : t->span<float>()) v = dist(rng);
  }
  ir::OpOptions options;
  options.name = "node";
  options.domain = kQtuneDomain;
  b.Output(
      b.Op("FusedConv",
           {b.Input("x", DataType::kFloat32, x.sizes()), b.Initializer("w", w),
            b.Initializer("b", bias)},
           {ir::Attribute::Ints("kernel_shape", {3, 3}), ir::Attribute::Ints("pads", {1, 1, 1, 1}),
            ir::Attribute::String("activation", "Relu")},
           options));
  auto graph = b.Build();
  auto owned = MakeRequest(*graph->FindNode("node"), {x, w, bias}, {false, true, true},
                           {MakeInfo(DataType::kFloat32, {1, c, hw, hw})}, Layout::kNhwc, 1);
  auto choice = CreateOnednnConvKernel(*owned->request);
  QTUNE_CHECK(choice.ok() && choice->has_value());
  std::vector<Tensor> inputs = {*x.Reshaped({1, hw, hw, c}), w, bias};
  std::vector<Tensor> outputs = {*Tensor::Allocate(DataType::kFloat32, {1, hw, hw, c})};
  std::printf("    fp32 kernel %s\n", (*choice)->kernel->Describe().c_str());
  return MedianMillis(*(*choice)->kernel, inputs, outputs, 5, 30);
}

double Int8Millis(int64_t c, int64_t hw, std::mt19937& rng) {
  QSpec s;
  s.c_in = s.c_out = c;
  s.h = s.w = hw;
  s.pads = {1, 1, 1, 1};
  s.activation = "Relu";
  QCase q = MakeQCase(s, rng, 0);
  q.inputs[kXZeroPoint] = Tensor::Scalar<uint8_t>(0);  // post-ReLU activations
  auto prepared = Prepare(q, &CreateOnednnQConvKernel, 1);
  QTUNE_CHECK(prepared.ok() && (*prepared)->kernel != nullptr);
  PreparedKernel& p = **prepared;
  std::printf("    int8 kernel %s\n", p.kernel->Describe().c_str());
  return MedianMillis(*p.kernel, p.inputs, p.outputs, 5, 30);
}

TEST(OnednnQConvLayers, SpeedAgainstFp32AtOneThread) {
  std::mt19937 rng(TestSeed(5303));
  for (auto [c, hw] : {std::pair<int64_t, int64_t>{64, 56}, {256, 14}}) {
    double fp32 = 1e9, int8 = 1e9;
    for (int round = 0; round < 3; ++round) {  // interleaved rounds; the best median wins
      fp32 = std::min(fp32, Fp32Millis(c, hw, rng));
      int8 = std::min(int8, Int8Millis(c, hw, rng));
    }
    std::printf(
        "[ speed ] 1x%lldx%lldx%lld 3x3 %lld->%lld, 1 thread: fp32 FusedConv %.3f ms, "
        "int8 QConv %.3f ms, ratio %.2fx\n",
        static_cast<long long>(c), static_cast<long long>(hw), static_cast<long long>(hw),
        static_cast<long long>(c), static_cast<long long>(c), fp32, int8, fp32 / int8);
  }
}

}  // namespace
}  // namespace qtune::runtime::quant_testing
