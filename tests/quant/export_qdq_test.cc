// QDQ export on a hand-made plan for the bundled Fashion-MNIST ResNet (valid graph, runs in
// qtune and in ONNX Runtime with matching outputs) and the export rules on small graphs.
#include "quant/export_qdq.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/float_convert.h"
#include "core/npy.h"
#include "export_test_util.h"
#include "ir/builder.h"
#include "ir/verify.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::quant {
namespace {

using testing::CountOps;

float MaxAbs(const Tensor& t) {
  float m = 0;
  for (float v : t.span<float>()) m = std::max(m, std::fabs(v));
  return m;
}

struct ModelRun {
  Tensor fp32, qtune, ort;
  bool ort_ran = false;
};

// Exports the hand-made plan, checks the structure, runs 256 test images.
ModelRun ExportAndRun(QuantFormat format, const ExportOptions& options, int64_t expected_opset) {
  ModelRun run;
  auto graph = testing::LoadCleanFmnist();
  if (graph == nullptr) return run;
  QuantPlan plan = testing::HandMadePlan(*graph, format);
  auto quantized = graph->Clone();
  auto report = ExportQdq(*quantized, plan, options);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return run;
  EXPECT_TRUE(ir::Verify(*quantized).ok());
  EXPECT_EQ(quantized->onnx_opset(), expected_opset);
  const int sites = static_cast<int>(plan.sites.size());  // 10 activations + 10 weights
  EXPECT_EQ(sites, 20);
  EXPECT_EQ(CountOps(*quantized, "DequantizeLinear"), sites);
  EXPECT_EQ(CountOps(*quantized, "QuantizeLinear"), options.float_weights ? sites : sites / 2);
  for (const ExportedSite& site : report->sites) {
    if (site.kind != QuantSite::Kind::kWeight || options.float_weights) continue;
    const ir::Node* dq = quantized->FindNode(site.dq_node);
    EXPECT_NE(dq, nullptr);
    if (dq == nullptr) return run;
    DataType want = format == QuantFormat::kInt8 ? DataType::kInt8 : DataType::kFloat8E4M3FN;
    EXPECT_EQ(dq->input(0)->dtype(), want) << site.value;
    EXPECT_TRUE(dq->input(0)->is_initializer()) << site.value;
    EXPECT_EQ(dq->GetInt("axis", -7), 0) << site.value;
    EXPECT_GT(site.min_scale, 0.0f);
  }
  auto test = ReadNpy(testing::FmnistTestPath());
  EXPECT_TRUE(test.ok());
  if (!test.ok()) return run;
  Tensor x = testing::Rows(*test, 0, 256);
  auto fp32 = testing::RunQtune(*graph, "input", x);
  auto q = testing::RunQtune(*quantized, "input", x);
  EXPECT_TRUE(fp32.ok()) << fp32.status().ToString();
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  if (!fp32.ok() || !q.ok()) return run;
  run.fp32 = *fp32;
  run.qtune = *q;
  if (qtune::testing::OrtAvailable()) {
    // ONNX Runtime's CPU QDQ fusion makes float8 Q/DQ around Conv into QLinearConv, which
    // has no float8 kernel: FP8 models run with basic optimizations only.
    setenv("QTUNE_ORT_OPT_LEVEL", format == QuantFormat::kFp8E4M3 ? "basic" : "all", 1);
    auto ort = testing::RunOrtOn(*quantized, QuantFormatName(format), "input", x);
    EXPECT_TRUE(ort.ok()) << ort.status().ToString();
    if (ort.ok()) {
      run.ort = *ort;
      run.ort_ran = true;
    }
  }
  return run;
}

// qtune and ONNX Runtime round a few values to neighbouring levels (different
// accumulation order), so the logits may differ by about one output quantization step
// (amax / 127); fp8's coarser steps (3 mantissa bits) allow two. Overall they must agree
// far better than either agrees with fp32.
void CheckRun(const ModelRun& run, double min_agreement, float steps = 1.0f) {
  if (!run.qtune.is_valid()) return;
  const float output_scale = MaxAbs(run.fp32) / 127.0f;
  double agreement = testing::Agreement(testing::Top1(run.qtune), testing::Top1(run.fp32));
  EXPECT_GE(agreement, min_agreement);
  EXPECT_GT(qtune::testing::MaxAbsDiff(run.qtune, run.fp32), 0.0) << "export changed nothing";
  if (!run.ort_ran) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  double diff = qtune::testing::MaxAbsDiff(run.qtune, run.ort);
  EXPECT_LE(qtune::testing::RelativeL2(run.qtune, run.ort), 0.01);
  EXPECT_LE(diff, steps * output_scale)
      << "qtune vs ONNX Runtime on the QDQ model (output scale " << output_scale << ")";
  std::printf(
      "top-1 agreement with fp32 %.4f; max |qtune - ort| %.3g (output scale %.3g), "
      "relative L2 %.3g (quantization error: relative L2 %.3g)\n",
      agreement, diff, output_scale, qtune::testing::RelativeL2(run.qtune, run.ort),
      qtune::testing::RelativeL2(run.qtune, run.fp32));
}

TEST(ExportQdqModelTest, Int8HandMadePlanRunsInQtuneAndOnnxRuntime) {
  ModelRun run = ExportAndRun(QuantFormat::kInt8, {}, 13);
  CheckRun(run, 0.97);
}

TEST(ExportQdqModelTest, Fp8HandMadePlanUpgradesToOpset19AndRuns) {
  ModelRun run = ExportAndRun(QuantFormat::kFp8E4M3, {}, 19);
  CheckRun(run, 0.97, /*steps=*/2.0f);
}

TEST(ExportQdqModelTest, FloatWeightsKeepQuantizeLinearOnWeights) {
  ExportOptions options;
  options.float_weights = true;
  ModelRun run = ExportAndRun(QuantFormat::kInt8, options, 13);
  CheckRun(run, 0.97);
}

// ---- Rules on small graphs. ----

std::unique_ptr<ir::Graph> TwoReluGraph() {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 4});
  ir::Value* r = b.Op("Relu", {x}, {}, {.name = "relu", .output_names = {"r"}});
  b.SetType(r, DataType::kFloat32, Shape::FromSizes({2, 4}));
  ir::Value* a = b.Op("Add", {x, r}, {}, {.name = "add", .output_names = {"a"}});
  ir::Value* m = b.Op("Mul", {r, a}, {}, {.name = "mul", .output_names = {"y"}});
  b.Output(m);
  return b.Build();
}

QuantSite Activation(std::string value, std::vector<std::pair<std::string, int>> consumers,
                     float amax) {
  QuantSite s;
  s.value = std::move(value);
  s.consumers = std::move(consumers);
  s.range = TensorRange{-amax, amax, amax, 8};
  return s;
}

const Tensor& ScaleOf(const ir::Graph& g, const std::string& node) {
  return g.FindNode(node)->input(1)->initializer();
}

TEST(ExportQdqTest, ScaleGroupSharesOneScaleFromTheLargestAmax) {
  auto g = TwoReluGraph();
  QuantPlan plan;
  plan.sites = {Activation("x", {{"add", 0}}, 2.0f), Activation("r", {{"add", 1}}, 5.0f)};
  plan.sites[0].scale_group = plan.sites[1].scale_group = "concat0";
  auto report = ExportQdq(*g, plan, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const ir::Node* qx = g->FindNode("x_QuantizeLinear");
  const ir::Node* qr = g->FindNode("r_QuantizeLinear");
  ASSERT_NE(qx, nullptr);
  ASSERT_NE(qr, nullptr);
  EXPECT_EQ(qx->input(1), qr->input(1));
  EXPECT_FLOAT_EQ(qx->input(1)->initializer().data<float>()[0], 5.0f / 127.0f);
  // Only the listed consumer reads the quantized x; Relu still reads the float x.
  EXPECT_EQ(g->FindNode("relu")->input(0)->name(), "x");
  EXPECT_EQ(g->FindNode("add")->input(0)->name(), "x_dequantized");
  EXPECT_EQ(g->FindNode("mul")->input(0)->name(), "r");
}

TEST(ExportQdqTest, AsymmetricUint8IncludesZero) {
  auto g = TwoReluGraph();
  QuantSite s = Activation("r", {{"add", 1}}, 3.0f);
  s.range = TensorRange{0.5f, 3.0f, 3.0f, 8};  // lo becomes 0
  s.config.symmetric = false;
  QuantPlan plan;
  plan.sites = {s};
  ASSERT_TRUE(ExportQdq(*g, plan, {}).ok());
  const ir::Node* q = g->FindNode("r_QuantizeLinear");
  EXPECT_FLOAT_EQ(q->input(1)->initializer().data<float>()[0], 3.0f / 255.0f);
  EXPECT_EQ(q->input(2)->dtype(), DataType::kUint8);
  EXPECT_EQ(q->input(2)->initializer().data<uint8_t>()[0], 0);
  plan.sites[0].range = TensorRange{-1.0f, 3.0f, 3.0f, 8};
  auto g2 = TwoReluGraph();
  ASSERT_TRUE(ExportQdq(*g2, plan, {}).ok());
  const ir::Node* q2 = g2->FindNode("r_QuantizeLinear");
  EXPECT_FLOAT_EQ(q2->input(1)->initializer().data<float>()[0], 4.0f / 255.0f);
  EXPECT_EQ(q2->input(2)->initializer().data<uint8_t>()[0], 64);  // round(63.75)
}

TEST(ExportQdqTest, ZeroWeightChannelGetsTinyPositiveScale) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 2, 3, 3});
  Tensor w = Tensor::FromVector<float>({3, 2, 1, 1}, {0.5f, -1.0f, 0.0f, 0.0f, 2.0f, 2.0f});
  ir::Value* wv = b.Initializer("w", w);
  b.Output(b.Op("Conv", {x, wv}, {}, {.name = "conv", .output_names = {"y"}}));
  auto g = b.Build();
  QuantSite s;
  s.kind = QuantSite::Kind::kWeight;
  s.value = "w";
  s.consumers = {{"conv", 1}};
  s.config.axis = 0;
  QuantPlan plan;
  plan.sites = {s};
  auto report = ExportQdq(*g, plan, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const ir::Node* dq = g->FindNode("w_DequantizeLinear");
  ASSERT_NE(dq, nullptr);
  auto scales = dq->input(1)->initializer().span<float>();
  ASSERT_EQ(scales.size(), 3u);
  EXPECT_FLOAT_EQ(scales[0], 1.0f / 127.0f);
  EXPECT_GT(scales[1], 0.0f);
  EXPECT_FLOAT_EQ(scales[2], 2.0f / 127.0f);
  auto q = dq->input(0)->initializer().span<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(q.begin(), q.end()),
            (std::vector<int8_t>{64, -127, 0, 0, 127, 127}));  // 63.5 rounds to even 64
  EXPECT_EQ(g->FindValue("w"), nullptr) << "the unused float weight is dropped";
}

TEST(ExportQdqTest, Fp16ScalesSkipGraphInputAndOverflowWithWarnings) {
  auto g = TwoReluGraph();
  QuantPlan plan;
  plan.sites = {Activation("x", {{"add", 0}}, 2.0f), Activation("r", {{"add", 1}}, 4.0f),
                Activation("a", {{"mul", 1}}, 1e7f)};  // 1e7 / 127 > 65504
  ExportOptions options;
  options.fp16_scales = true;
  auto report = ExportQdq(*g, plan, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(ir::Verify(*g).ok());
  EXPECT_EQ(g->onnx_opset(), 19);
  ASSERT_EQ(report->warnings.size(), 2u);
  EXPECT_NE(report->warnings[0].find("'x'"), std::string::npos) << report->warnings[0];
  EXPECT_NE(report->warnings[0].find("graph input"), std::string::npos);
  EXPECT_NE(report->warnings[1].find("'a'"), std::string::npos) << report->warnings[1];
  EXPECT_EQ(ScaleOf(*g, "x_QuantizeLinear").dtype(), DataType::kFloat32);
  EXPECT_EQ(ScaleOf(*g, "a_QuantizeLinear").dtype(), DataType::kFloat32);
  const Tensor& rs = ScaleOf(*g, "r_QuantizeLinear");
  ASSERT_EQ(rs.dtype(), DataType::kFloat16);
  EXPECT_FLOAT_EQ(HalfToFloat(rs.data<uint16_t>()[0]), HalfToFloat(FloatToHalf(4.0f / 127.0f)));
  // r's Q reads a float16 Cast of r; its DQ output is cast back to float32 for the Add.
  EXPECT_EQ(g->FindNode("r_QuantizeLinear")->input(0)->dtype(), DataType::kFloat16);
  EXPECT_EQ(g->FindNode("add")->input(1)->dtype(), DataType::kFloat32);
  EXPECT_EQ(CountOps(*g, "Cast"), 2);
}

TEST(ExportQdqModelTest, Fp16ScalesOnFmnistRunInQtuneAndOnnxRuntime) {
  // The loaded model has no types on intermediate tensors: the Casts the export adds must
  // survive cast folding, or a float32 tensor would meet a float16 scale.
  ExportOptions options;
  options.fp16_scales = true;
  ModelRun run = ExportAndRun(QuantFormat::kInt8, options, 19);
  CheckRun(run, 0.97);
}

TEST(ExportQdqTest, ErrorsNameTheSite) {
  QuantPlan plan;
  plan.sites = {Activation("nope", {}, 1.0f)};
  auto g = TwoReluGraph();
  auto r = ExportQdq(*g, plan, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("'nope'"), std::string::npos);

  plan.sites = {Activation("r", {{"add", 0}}, 1.0f)};  // add's input 0 is x, not r
  g = TwoReluGraph();
  r = ExportQdq(*g, plan, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not read 'r'"), std::string::npos);

  plan.sites = {Activation("r", {{"add", 1}}, 1.0f)};
  plan.sites[0].range.reset();
  g = TwoReluGraph();
  r = ExportQdq(*g, plan, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);

  plan.sites[0].enabled = false;  // disabled sites are skipped, range or not
  g = TwoReluGraph();
  r = ExportQdq(*g, plan, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->disabled_sites, 1);
  EXPECT_EQ(CountOps(*g, "QuantizeLinear"), 0);
}

TEST(ExportQdqTest, DequantizedNamesMapBackToFloatNames) {
  EXPECT_EQ(FloatNameOfDequantized("conv1_out_dequantized"), "conv1_out");
  EXPECT_EQ(FloatNameOfDequantized("x_dequantized_2"), "x");
  EXPECT_EQ(FloatNameOfDequantized("x_dequantized_a"), std::nullopt);
  EXPECT_EQ(FloatNameOfDequantized("x"), std::nullopt);
  EXPECT_EQ(FloatNameOfDequantized("_dequantized"), std::nullopt);
}

}  // namespace
}  // namespace qtune::quant
