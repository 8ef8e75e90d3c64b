// NVFP4 and MXFP8 weight quantization end to end: the nvfp4 / mxfp8 presets on a batch-1
// MatMul stack and on the Fashion-MNIST ResNet (its Gemm), the exported layout (ops,
// initializer types, opset), effective bits, qtune against ONNX Runtime on the export, and
// held-out top-1 against fp32 (MXFP8 within 0.5 pt, NVFP4 within 1.5 pt).
#include <gtest/gtest.h>

#include <cstdio>

#include "core/npy.h"
#include "export_test_util.h"
#include "ir/matmul_stack.h"
#include "quant/quantize_model.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::quant {
namespace {

using testing::CountOps;

StatusOr<QuantizeModelResult> QuantizeWith(const ir::Graph& g, const std::string& recipe,
                                           std::optional<Target> target = std::nullopt) {
  QuantizeModelOptions options;
  options.recipe = recipe;
  options.target = target;
  options.show_progress = false;
  options.random_calibration = true;
  options.random_samples = 4;
  return QuantizeModel(g, options);
}

Tensor Input(int64_t rows, int64_t width) {
  std::vector<float> x(static_cast<size_t>(rows * width));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.17f * static_cast<float>(i)) * 1.5f;
  return Tensor::FromVector<float>({rows, width}, x);
}

int CountInitializers(const ir::Graph& g, DataType type) {
  int n = 0;
  for (const ir::Value* v : g.initializers()) n += v->initializer().dtype() == type ? 1 : 0;
  return n;
}

TEST(BlockFloatQuantizeTest, Nvfp4PresetExportsTwoDequantizeLinearsPerLayer) {
  auto stack = ir::BuildMatMulStack({.seed = 5, .layers = 2, .width = 64, .batch = 1});
  auto result = QuantizeWith(*stack, "nvfp4");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ir::Graph& q = *result->quantized;
  EXPECT_EQ(q.onnx_opset(), 23);
  EXPECT_EQ(CountOps(q, "DequantizeLinear"), 4);
  EXPECT_EQ(CountInitializers(q, DataType::kFloat4E2M1), 2);
  EXPECT_EQ(CountInitializers(q, DataType::kFloat8E4M3FN), 2);
  for (const ExportedSite& s : result->export_report.sites) {
    EXPECT_EQ(s.effective_bits, 4.5) << s.value;
    EXPECT_EQ(s.block_size, 16) << s.value;
  }
  const Tensor x = Input(1, 64);
  auto fp32 = testing::RunQtune(*stack, "x", x);
  auto ours = testing::RunQtune(q, "x", x);
  ASSERT_TRUE(fp32.ok() && ours.ok());
  const double error = qtune::testing::RelativeL2(*ours, *fp32);
  std::printf("[ nvfp4 ] MatMul stack 64 wide, 2 layers: relative L2 vs fp32 %.4f\n", error);
  // E2M1 keeps one mantissa bit: about 0.1 relative L2 per layer's weights.
  EXPECT_LT(error, 0.25);
  // --target ort: e4m3-held values with float32 scales (opset 21), the same numbers.
  auto for_ort = QuantizeWith(*stack, "nvfp4", Target::kOrt);
  ASSERT_TRUE(for_ort.ok()) << for_ort.status().ToString();
  EXPECT_EQ(for_ort->quantized->onnx_opset(), 21);
  EXPECT_EQ(CountInitializers(*for_ort->quantized, DataType::kFloat4E2M1), 0);
  auto ours_ort = testing::RunQtune(*for_ort->quantized, "x", x);
  ASSERT_TRUE(ours_ort.ok()) << ours_ort.status().ToString();
  EXPECT_EQ(qtune::testing::MaxAbsDiff(*ours_ort, *ours), 0.0);
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  auto ort = testing::RunOrtOn(*for_ort->quantized, "nvfp4_stack", "x", x);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  EXPECT_LE(qtune::testing::MaxAbsDiff(*ours_ort, *ort), 1e-4);
}

TEST(BlockFloatQuantizeTest, Mxfp8PresetUsesE8M0ScalesAndFloatScalesForOrt) {
  auto stack = ir::BuildMatMulStack({.seed = 5, .layers = 2, .width = 64, .batch = 1});
  const Tensor x = Input(1, 64);
  auto fp32 = testing::RunQtune(*stack, "x", x);
  ASSERT_TRUE(fp32.ok());
  auto result = QuantizeWith(*stack, "mxfp8");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ir::Graph& q = *result->quantized;
  EXPECT_EQ(q.onnx_opset(), 24);
  EXPECT_EQ(CountOps(q, "DequantizeLinear"), 2);
  EXPECT_EQ(CountInitializers(q, DataType::kFloat8E8M0), 2);
  for (const ExportedSite& s : result->export_report.sites) EXPECT_EQ(s.effective_bits, 8.25);
  auto ours = testing::RunQtune(q, "x", x);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  const double error = qtune::testing::RelativeL2(*ours, *fp32);
  std::printf("[ mxfp8 ] MatMul stack 64 wide, 2 layers: relative L2 vs fp32 %.5f\n", error);
  EXPECT_LT(error, 0.06);  // E4M3: three mantissa bits

  auto for_ort = QuantizeWith(*stack, "mxfp8", Target::kOrt);
  ASSERT_TRUE(for_ort.ok()) << for_ort.status().ToString();
  EXPECT_EQ(CountInitializers(*for_ort->quantized, DataType::kFloat8E8M0), 0);
  auto ours_ort = testing::RunQtune(*for_ort->quantized, "x", x);
  ASSERT_TRUE(ours_ort.ok());
  EXPECT_EQ(qtune::testing::MaxAbsDiff(*ours_ort, *ours), 0.0);  // same values, other scale type
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  auto ort = testing::RunOrtOn(*for_ort->quantized, "mxfp8_stack", "x", x);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  EXPECT_LE(qtune::testing::MaxAbsDiff(*ours_ort, *ort), 1e-4);
}

// The ResNet's Gemm (its only MatMul/Gemm) in NVFP4 / MXFP8; Convs stay float.
TEST(BlockFloatQuantizeTest, FmnistHeldOutTop1StaysNearFp32) {
  auto model = testing::LoadCleanFmnist();
  ASSERT_NE(model, nullptr);
  auto images = ReadNpy(testing::FmnistTestPath());
  auto labels_tensor = ReadNpy(testing::FmnistLabelsPath());
  ASSERT_TRUE(images.ok() && labels_tensor.ok());
  const std::vector<int64_t> labels = testing::Labels(*labels_tensor);
  auto top1 = [&](const ir::Graph& g) {
    auto logits = testing::RunQtune(g, "input", *images, 2);
    EXPECT_TRUE(logits.ok()) << logits.status().ToString();
    return logits.ok() ? testing::Agreement(testing::Top1(*logits), labels) : 0.0;
  };
  const double fp32 = top1(*model);
  for (const std::string recipe : {"nvfp4", "mxfp8"}) {
    auto result = QuantizeWith(*model, recipe);
    ASSERT_TRUE(result.ok()) << recipe << ": " << result.status().ToString();
    for (const SkippedLayer& s : result->plan.skipped) {
      std::printf("[ %s ] skipped %s (%s): %s\n", recipe.c_str(), s.node.c_str(), s.op_type.c_str(),
                  s.reason.c_str());
    }
    ASSERT_GE(result->export_report.sites.size(), 1u) << recipe;
    const double q = top1(*result->quantized);
    std::printf("[ %s ] fmnist ResNet top-1 on 2000 held-out images: %.4f (fp32 %.4f)\n",
                recipe.c_str(), q, fp32);
    EXPECT_GE(q, fp32 - (recipe == "nvfp4" ? 0.015 : 0.005)) << recipe;
  }
}

}  // namespace
}  // namespace qtune::quant
