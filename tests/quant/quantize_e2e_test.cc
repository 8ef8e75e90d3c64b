// The whole flow on the bundled Fashion-MNIST ResNet: quantize with calib_512.npy, then
// top-1 on the 2000 test images must stay within 0.2 points of fp32 (INT8, cpu) and 0.3
// points (FP8, trt), measured in qtune and in ONNX Runtime.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/npy.h"
#include "export_test_util.h"
#include "ir/onnx_io.h"
#include "ir/verify.h"
#include "quant/quantize_model.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::quant {
namespace {

struct Accuracy {
  double fp32 = 0, quantized = 0;
};

void ExpectWithin(const char* engine, Accuracy a, double points) {
  std::printf("%s: top-1 fp32 %.4f, quantized %.4f (%+.2f points)\n", engine, a.fp32, a.quantized,
              100.0 * (a.quantized - a.fp32));
  EXPECT_LE(std::abs(a.quantized - a.fp32) * 100.0, points) << engine;
  EXPECT_GT(a.fp32, 0.85) << engine << ": the float model itself is off";
}

void QuantizeAndMeasure(const std::string& recipe, Target target, double points) {
  auto model = ir::LoadModel(testing::FmnistModelPath());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  QuantizeModelOptions options;
  options.recipe = recipe;
  options.target = target;
  options.calib_specs = {testing::FmnistCalibPath()};
  options.show_progress = false;
  auto result = QuantizeModel(**model, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(ir::Verify(*result->quantized).ok());
  EXPECT_GE(result->summary.quantized_layers, 9) << SummaryToText(result->summary);

  auto x = ReadNpy(testing::FmnistTestPath());
  auto y = ReadNpy(testing::FmnistLabelsPath());
  ASSERT_TRUE(x.ok() && y.ok());
  std::vector<int64_t> labels = testing::Labels(*y);
  auto fp = testing::RunQtune(**model, "input", *x);
  auto q = testing::RunQtune(*result->quantized, "input", *x);
  ASSERT_TRUE(fp.ok()) << fp.status().ToString();
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ExpectWithin("qtune",
               {testing::Agreement(testing::Top1(*fp), labels),
                testing::Agreement(testing::Top1(*q), labels)},
               points);

  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  // ORT's CPU QDQ fusion has no float8 QLinearConv: FP8 runs with basic optimizations.
  setenv("QTUNE_ORT_OPT_LEVEL", recipe.rfind("fp8", 0) == 0 ? "basic" : "all", 1);
  auto ort_fp = testing::RunOrtOn(**model, "e2e_fp32", "input", *x);
  auto ort_q = testing::RunOrtOn(*result->quantized, "e2e_" + recipe, "input", *x);
  ASSERT_TRUE(ort_fp.ok()) << ort_fp.status().ToString();
  ASSERT_TRUE(ort_q.ok()) << ort_q.status().ToString();
  ExpectWithin("onnxruntime",
               {testing::Agreement(testing::Top1(*ort_fp), labels),
                testing::Agreement(testing::Top1(*ort_q), labels)},
               points);
}

TEST(QuantizeE2eTest, Int8CpuStaysWithinPoint2OfFp32) {
  QuantizeAndMeasure("int8", Target::kCpu, 0.2);
}

TEST(QuantizeE2eTest, Fp8TrtStaysWithinPoint3OfFp32) {
  QuantizeAndMeasure("fp8", Target::kTrt, 0.3);
}

TEST(QuantizeE2eTest, Int8ResidualRecipeRuns) {
  QuantizeAndMeasure("int8_residual", Target::kCpu, 0.2);
}

TEST(QuantizeE2eTest, MissingCalibrationDataIsAnError) {
  auto model = ir::LoadModel(testing::FmnistModelPath());
  ASSERT_TRUE(model.ok());
  QuantizeModelOptions options;
  auto result = QuantizeModel(**model, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("--random-calibration"), std::string::npos);
}

// The library refuses what the CLI refuses (exit 3 there): a model quantized before, here
// qtune's own int8 export and its int4 --target ort export (the CLI tests add MatMulNBits).
TEST(QuantizeE2eTest, AnAlreadyQuantizedModelIsRefused) {
  auto model = ir::LoadModel(testing::FmnistModelPath());
  ASSERT_TRUE(model.ok());
  for (auto [recipe, target] : {std::pair{"int8", Target::kCpu}, {"int4", Target::kOrt}}) {
    QuantizeModelOptions options;
    options.recipe = recipe;
    options.target = target;
    options.calib_specs = {testing::FmnistCalibPath()};
    options.show_progress = false;
    auto first = QuantizeModel(**model, options);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto again = QuantizeModel(*first->quantized, options);
    ASSERT_FALSE(again.ok()) << recipe;
    EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(again.status().message().find("already quantized ("), std::string::npos)
        << again.status().ToString();
    EXPECT_NE(again.status().message().find("DequantizeLinear node"), std::string::npos)
        << again.status().ToString();
  }
}

TEST(QuantizeE2eTest, ReportOnlyBuildsTheSummaryWithoutAModel) {
  auto model = ir::LoadModel(testing::FmnistModelPath());
  ASSERT_TRUE(model.ok());
  QuantizeModelOptions options;
  options.random_calibration = true;
  options.export_model = false;
  options.show_progress = false;
  auto result = QuantizeModel(**model, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->quantized, nullptr);
  nlohmann::json j = SummaryToJson(result->summary);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["layers"].size(), result->summary.rows.size());
  bool gemm_skipped = false;
  for (const auto& layer : j["layers"]) {
    if (layer["op"] == "Gemm")
      gemm_skipped = !layer["quantized"].get<bool>() && !layer["reason"].get<std::string>().empty();
  }
  EXPECT_TRUE(gemm_skipped) << j.dump(2);
}

}  // namespace
}  // namespace qtune::quant
