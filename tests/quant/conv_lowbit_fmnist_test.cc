// Block formats on the Conv weights of the Fashion-MNIST ResNet (issue 27): qtune against
// ONNX Runtime 1.30 on its Conv int4 / NVFP4 / MXFP8 exports, no DequantizeLinear left in
// the prepared plan, and held-out top-1 against fp32 within the bounds.
#include <gtest/gtest.h>

#include <cstdio>

#include "conv_lowbit_util.h"
#include "core/npy.h"
#include "export_test_util.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::quant {
namespace {

namespace fs = std::filesystem;
using conv_lowbit::DequantizeFeedingConv;
using conv_lowbit::Int4ConvRecipe;
using conv_lowbit::Quantize;

struct FmnistData {
  std::unique_ptr<ir::Graph> model;
  Tensor images;
  std::vector<int64_t> labels;
};

FmnistData LoadFmnist() {
  FmnistData d;
  d.model = testing::LoadCleanFmnist();
  auto images = ReadNpy(testing::FmnistTestPath());
  auto labels = ReadNpy(testing::FmnistLabelsPath());
  EXPECT_TRUE(images.ok() && labels.ok());
  if (images.ok()) d.images = std::move(images).value();
  if (labels.ok()) d.labels = testing::Labels(*labels);
  return d;
}

// The Conv exports of the ResNet run in ONNX Runtime 1.30 and agree with qtune: int4
// (QDQ, the same for --target ort: no MatMulNBits for Conv), NVFP4 and MXFP8 with float32
// block scales (--target ort).
TEST(ConvLowBitTest, FmnistConvExportsRunInOrtAndAgreeWithQtune) {
  FmnistData d = LoadFmnist();
  ASSERT_NE(d.model, nullptr);
  const Tensor x = testing::Rows(d.images, 0, 200);
  const std::string int4 = Int4ConvRecipe(16, "awq");
  struct Case {
    std::string name, recipe;
    Target target;
    int conv_dq;
  } cases[] = {{"int4 b16 awq", int4, Target::kCpu, 8},
               {"int4 b16 awq --target ort", int4, Target::kOrt, 8},
               {"nvfp4 --target ort", "nvfp4", Target::kOrt, 8},
               {"mxfp8 --target ort", "mxfp8", Target::kOrt, 4}};
  if (!qtune::testing::OrtAvailable()) {
    fs::remove(int4);
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto result = Quantize(*d.model, c.recipe, c.target, true);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const ir::Graph& q = *result->quantized;
    EXPECT_EQ(DequantizeFeedingConv(q), c.conv_dq);
    // The head's K = 64 is one int4 block: per channel, no MatMulNBits.
    EXPECT_EQ(testing::CountOps(q, "MatMulNBits"), 0);
    // The engine folds every weight DequantizeLinear when it prepares the model: none runs
    // per call, and the Convs run on their fp32 kernels.
    auto session = runtime::Session::Create(q, runtime::SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto plan = (*session)->Prepare({{"input", {1, 1, 28, 28}}});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    for (const runtime::PlanStep& step : (*plan)->steps) {
      EXPECT_NE(step.op_type, "DequantizeLinear") << (*plan)->ToString();
      if (step.op_type == "Conv" || step.op_type == "FusedConv") {
        EXPECT_EQ(step.kernel->Describe().find("reference"), std::string::npos)
            << (*plan)->ToString();
      }
    }
    auto ours = testing::RunQtune(q, "input", x);
    auto ort = testing::RunOrtOn(q, "conv_lowbit", "input", x);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    ASSERT_TRUE(ort.ok()) << ort.status().ToString();
    const double diff = qtune::testing::MaxAbsDiff(*ours, *ort);
    const double agree = testing::Agreement(testing::Top1(*ours), testing::Top1(*ort));
    std::printf("[ %s ] qtune vs ORT on 200 images: max |diff| %.2e, top-1 agreement %.3f\n",
                c.name.c_str(), diff, agree);
    EXPECT_LE(diff, 1e-4);
    EXPECT_GE(agree, 0.99);
  }
  fs::remove(int4);
}

// Held-out top-1 (2000 images) within the bounds of fp32: int4 AWQ and MXFP8 0.5
// pt, NVFP4 1.5 pt; and pinned near what was measured (fp32 0.9030; int4_awq preset
// 0.9030, int4 block 16 AWQ on every conv 0.9005, nvfp4 0.9075, mxfp8 0.9025).
TEST(ConvLowBitTest, FmnistHeldOutTop1WithConvsQuantizedStaysNearFp32) {
  FmnistData d = LoadFmnist();
  ASSERT_NE(d.model, nullptr);
  auto top1 = [&](const ir::Graph& g) {
    auto logits = testing::RunQtune(g, "input", d.images, 2);
    EXPECT_TRUE(logits.ok()) << logits.status().ToString();
    return logits.ok() ? testing::Agreement(testing::Top1(*logits), d.labels) : 0.0;
  };
  const double fp32 = top1(*d.model);
  EXPECT_NEAR(fp32, 0.9030, 1e-9);
  const std::string int4 = Int4ConvRecipe(16, "awq");
  struct Case {
    std::string name, recipe;
    double bound, measured;
    size_t convs;  // Conv weights quantized
  } cases[] = {{"int4_awq", "int4_awq", 0.005, 0.9030, 1},
               {"int4 b16 awq", int4, 0.005, 0.9005, 8},
               {"nvfp4", "nvfp4", 0.015, 0.9075, 8},
               {"mxfp8", "mxfp8", 0.005, 0.9025, 4}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto result = Quantize(*d.model, c.recipe, std::nullopt, true);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    size_t convs = 0;
    for (const QuantSite& s : result->plan.sites) {
      for (const auto& [node, index] : s.consumers) {
        const ir::Node* n = d.model->FindNode(node);
        convs += n != nullptr && n->op_type() == "Conv" && index == 1 && s.enabled;
      }
    }
    EXPECT_EQ(convs, c.convs);
    const double q = top1(*result->quantized);
    std::printf("[ %s ] fmnist ResNet top-1, 2000 held-out images: %.4f (fp32 %.4f), %zu convs\n",
                c.name.c_str(), q, fp32, convs);
    EXPECT_GE(q, fp32 - c.bound);
    EXPECT_NEAR(q, c.measured, 0.004);  // a rounding change moves a few images, not more
  }
  fs::remove(int4);
}

}  // namespace
}  // namespace qtune::quant
