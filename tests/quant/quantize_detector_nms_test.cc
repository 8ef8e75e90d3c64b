// Quantizing a detector whose export includes its post-processing (Conv head ->
// NonMaxSuppression -> Gather of the kept boxes): the number of detections is known only
// while the model runs, so the engine runs it in stages. Calibration runs through it, the
// convolutions are quantized, NMS and the gathers stay float, and the quantized model
// runs in qtune and in ONNX Runtime with the same detections.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/shape.h"
#include "export_test_util.h"
#include "ir/verify.h"
#include "util/detector_models.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/random_tensor.h"

namespace qtune::quant {
namespace {

using ir::Attribute;

TEST(QuantizeDetectorNmsTest, CalibratesQuantizesAndRunsWithPostProcessing) {
  std::mt19937 rng(77);
  std::unique_ptr<ir::Graph> model = qtune::testing::BuildDetectorWithNms(rng);
  auto result =
      testing::QuantizeOn(*model, qtune::testing::UniformTensor({16, 3, 16, 16}, rng, 1.0f), "nms");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(ir::Verify(*result->quantized).ok());
  EXPECT_GE(result->summary.quantized_layers, 1) << SummaryToText(result->summary);
  EXPECT_EQ(testing::CountOps(*result->quantized, "NonMaxSuppression"), 1);

  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  std::set<int64_t> counts;
  for (int trial = 0; trial < 3; ++trial) {
    const float scales[] = {0.1f, 1.0f, 4.0f};
    Tensor x = qtune::testing::UniformTensor({1, 3, 16, 16}, rng, scales[trial]);
    auto fp = testing::RunQtune(*model, "image", x);
    auto ort_fp = testing::RunOrtOn(*model, "nms_fp32_" + std::to_string(trial), "image", x);
    ASSERT_TRUE(fp.ok()) << fp.status().ToString();
    ASSERT_TRUE(ort_fp.ok()) << ort_fp.status().ToString();
    ASSERT_EQ(fp->sizes(), ort_fp->sizes());
    EXPECT_LT(qtune::testing::MaxAbsDiff(*fp, *ort_fp), 1e-4);
    counts.insert(fp->size(0));

    auto q = testing::RunQtune(*result->quantized, "image", x);
    auto ort_q =
        testing::RunOrtOn(*result->quantized, "nms_int8_" + std::to_string(trial), "image", x);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    ASSERT_TRUE(ort_q.ok()) << ort_q.status().ToString();
    ASSERT_EQ(q->sizes(), ort_q->sizes()) << "trial " << trial;
    EXPECT_LT(qtune::testing::MaxAbsDiff(*q, *ort_q), 0.05) << "trial " << trial;
  }
  std::string kept;
  for (int64_t c : counts) kept += " " + std::to_string(c);
  EXPECT_GE(counts.size(), 2u) << "the inputs should keep different numbers of boxes:" << kept;
}

}  // namespace
}  // namespace qtune::quant
