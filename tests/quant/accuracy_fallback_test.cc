// The accuracy fallback (accuracy_fallback.h) on the bundled Fashion-MNIST ResNet: the
// plan it leaves reaches the target when it says so (checked by exporting the plan and
// measuring it here), the layers it keeps in float really run in float, an unreachable
// target is reported as such, and a met target changes nothing.
#include "quant/accuracy_fallback.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/npy.h"
#include "export_test_util.h"
#include "ir/onnx_io.h"
#include "quant/quantize_model.h"

namespace qtune::quant {
namespace {

constexpr int64_t kSamples = 64;

// The int8 plan of fmnist, calibrated, with the float graph it refers to.
QuantizeModelResult QuantizedFmnist() {
  auto model = ir::LoadModel(testing::FmnistModelPath());
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  QuantizeModelOptions options;
  options.calib_specs = {testing::FmnistCalibPath()};
  options.show_progress = false;
  options.export_model = false;
  auto result = QuantizeModel(**model, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return std::move(result).value();
}

StatusOr<std::unique_ptr<CalibrationSource>> Calibration(const ir::Graph& graph) {
  return OpenCalibrationData({testing::FmnistCalibPath()}, "", graph);
}

// Output SQNR of `plan` exported, against the float graph, on the first kSamples
// calibration samples: measured independently of the fallback's own meter.
double MeasureSqnrDb(const ir::Graph& float_graph, const QuantPlan& plan) {
  std::unique_ptr<ir::Graph> quantized = float_graph.Clone();
  EXPECT_TRUE(ExportQdq(*quantized, plan, {}).ok());
  auto calib = ReadNpy(testing::FmnistCalibPath());
  EXPECT_TRUE(calib.ok());
  Tensor x = testing::Rows(*calib, 0, kSamples);
  auto fp = testing::RunQtune(float_graph, "input", x);
  auto q = testing::RunQtune(*quantized, "input", x);
  EXPECT_TRUE(fp.ok() && q.ok());
  double signal = 0, noise = 0;
  for (int64_t i = 0; i < fp->num_elements(); ++i) {
    double r = fp->data<float>()[i], d = r - q->data<float>()[i];
    signal += r * r;
    noise += d * d;
  }
  return 10.0 * std::log10(signal / noise);
}

FallbackOptions Options(double min_sqnr_db) {
  FallbackOptions options;
  options.min_sqnr_db = min_sqnr_db;
  options.max_samples = kSamples;
  options.show_progress = false;
  return options;
}

TEST(AccuracyFallbackTest, ReachesTheTargetByKeepingTheMostSensitiveLayersInFloat) {
  QuantizeModelResult q = QuantizedFmnist();
  auto source = Calibration(*q.float_graph);
  ASSERT_TRUE(source.ok());
  const double before = MeasureSqnrDb(*q.float_graph, q.plan);
  const size_t quantized_before = q.plan.quantized_nodes.size();

  const double target = before + 8.0;
  auto report = FallBackSensitiveLayers(*q.float_graph, q.plan, **source, Options(target));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::printf("fmnist int8: %.2f dB -> %.2f dB (target %.2f), %zu of %zu layers in float\n",
              report->sqnr_before_db, report->sqnr_after_db, target, report->fallen_back.size(),
              quantized_before);
  EXPECT_NEAR(report->sqnr_before_db, before, 0.05);
  EXPECT_TRUE(report->reached);
  EXPECT_GE(report->sqnr_after_db, target);
  EXPECT_NEAR(MeasureSqnrDb(*q.float_graph, q.plan), report->sqnr_after_db, 0.05);
  EXPECT_EQ(report->measured, std::vector<std::string>{q.float_graph->outputs()[0]->name()});
  ASSERT_FALSE(report->fallen_back.empty());
  EXPECT_LT(report->fallen_back.size(), quantized_before);

  // Sensitivity: every layer measured once, most sensitive first.
  ASSERT_EQ(report->sensitivity.size(), quantized_before);
  EXPECT_TRUE(std::is_sorted(report->sensitivity.begin(), report->sensitivity.end(),
                             [](const auto& a, const auto& b) { return a.sqnr_db < b.sqnr_db; }));

  // The float layers: out of quantized_nodes, skipped with a reason, and no enabled site
  // lists them as a consumer (so the export feeds them float tensors).
  for (const std::string& node : report->fallen_back) {
    EXPECT_EQ(std::count(q.plan.quantized_nodes.begin(), q.plan.quantized_nodes.end(), node), 0);
    auto skipped = std::find_if(q.plan.skipped.begin(), q.plan.skipped.end(),
                                [&](const SkippedLayer& s) { return s.node == node; });
    ASSERT_NE(skipped, q.plan.skipped.end()) << node;
    // The reason is the refinement's measurement, below the target, not a figure above it.
    const std::string& reason = skipped->reason;
    const std::string gives = "accuracy fallback: quantizing it too gives ";
    ASSERT_EQ(reason.rfind(gives, 0), 0u) << reason;
    EXPECT_LT(std::stod(reason.substr(gives.size())), target) << reason;
    EXPECT_NE(reason.find("sensitivity rank"), std::string::npos) << reason;
    for (const QuantSite& site : q.plan.sites) {
      if (!site.enabled) continue;
      for (const auto& [consumer, index] : site.consumers) EXPECT_NE(consumer, node) << site.value;
    }
  }
  std::unique_ptr<ir::Graph> exported = q.float_graph->Clone();
  ASSERT_TRUE(ExportQdq(*exported, q.plan, {}).ok());
  for (const std::string& node : report->fallen_back) {
    const ir::Node* n = exported->FindNode(node);
    ASSERT_NE(n, nullptr) << node;
    const ir::Node* producer = n->input(0)->producer();
    EXPECT_TRUE(producer == nullptr || producer->op_type() != "DequantizeLinear") << node;
  }
}

TEST(AccuracyFallbackTest, UnreachableTargetStopsAtTheFloatBudgetAndSaysSo) {
  QuantizeModelResult q = QuantizedFmnist();
  auto source = Calibration(*q.float_graph);
  ASSERT_TRUE(source.ok());
  const size_t layers = q.plan.quantized_nodes.size();
  FallbackOptions options = Options(300.0);
  options.max_float_fraction = 0.25;
  auto report = FallBackSensitiveLayers(*q.float_graph, q.plan, **source, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->reached);
  EXPECT_LE(report->fallen_back.size(), static_cast<size_t>(0.25 * static_cast<double>(layers)));
  EXPECT_GE(report->sqnr_after_db, report->sqnr_before_db);
  EXPECT_NEAR(MeasureSqnrDb(*q.float_graph, q.plan), report->sqnr_after_db, 0.05);
  for (const SkippedLayer& skipped : q.plan.skipped) {
    if (skipped.reason.find("accuracy fallback") == std::string::npos) continue;
    EXPECT_NE(skipped.reason.find("among the most sensitive layers (sensitivity rank"),
              std::string::npos)
        << skipped.reason;
  }
}

TEST(AccuracyFallbackTest, MetTargetChangesNothing) {
  QuantizeModelResult q = QuantizedFmnist();
  auto source = Calibration(*q.float_graph);
  ASSERT_TRUE(source.ok());
  const std::vector<std::string> before = q.plan.quantized_nodes;
  auto report = FallBackSensitiveLayers(*q.float_graph, q.plan, **source, Options(5.0));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->reached);
  EXPECT_TRUE(report->sensitivity.empty());
  EXPECT_TRUE(report->fallen_back.empty());
  EXPECT_EQ(q.plan.quantized_nodes, before);
}

// Through the library API (the CLI and recipes check the range themselves): a fraction
// above 1 once let the search index past the sensitivity list.
TEST(AccuracyFallbackTest, MaxFloatFractionOutsideZeroToOneIsInvalidArgument) {
  QuantizeModelResult q = QuantizedFmnist();
  auto source = Calibration(*q.float_graph);
  ASSERT_TRUE(source.ok());
  for (double fraction : {1.5, -0.25, std::nan("")}) {
    FallbackOptions options = Options(300.0);
    options.max_float_fraction = fraction;
    const QuantPlan before = q.plan;
    auto report = FallBackSensitiveLayers(*q.float_graph, q.plan, **source, options);
    ASSERT_FALSE(report.ok()) << fraction;
    EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(report.status().message().find("max_float_fraction"), std::string::npos);
    EXPECT_EQ(q.plan.quantized_nodes, before.quantized_nodes);
  }
}

TEST(AccuracyFallbackTest, NanTargetIsInvalidArgument) {
  QuantizeModelResult q = QuantizedFmnist();
  auto source = Calibration(*q.float_graph);
  ASSERT_TRUE(source.ok());
  auto report = FallBackSensitiveLayers(*q.float_graph, q.plan, **source, Options(std::nan("")));
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
}

TEST(AccuracyFallbackTest, KeepLayersInFloatDisablesSitesOnlyWhenAllTheirConsumersFallBack) {
  QuantPlan plan;
  plan.quantized_nodes = {"a", "b", "c"};
  QuantSite shared;
  shared.value = "x";
  shared.consumers = {{"a", 0}, {"b", 0}};
  QuantSite own;
  own.value = "w";
  own.kind = QuantSite::Kind::kWeight;
  own.consumers = {{"a", 1}};
  plan.sites = {shared, own};
  KeepLayersInFloat(plan, {"a"}, {"accuracy fallback: because"});
  EXPECT_EQ(plan.quantized_nodes, (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(plan.sites[0].enabled);
  EXPECT_EQ(plan.sites[0].consumers, (std::vector<std::pair<std::string, int>>{{"b", 0}}));
  EXPECT_FALSE(plan.sites[1].enabled);
  EXPECT_EQ(plan.sites[1].disabled_reason, kAccuracyFallbackReason);
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].node, "a");
  EXPECT_EQ(plan.skipped[0].reason, "accuracy fallback: because");
}

}  // namespace
}  // namespace qtune::quant
