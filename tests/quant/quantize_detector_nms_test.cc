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
#include "ir/builder.h"
#include "ir/verify.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::quant {
namespace {

using ir::Attribute;

Tensor I64(std::vector<int64_t> sizes, std::vector<int64_t> values) {
  return Tensor::FromVector<int64_t>(std::move(sizes), values);
}

// image [1,3,16,16] -> Conv 8 -> Relu -> Conv 5 (1x1) -> [1,5,256]: boxes = channels 0-3
// transposed to [1,256,4], scores = Sigmoid(channel 4) [1,1,256] -> NonMaxSuppression
// (at most 20, IoU 0.5, score 0.55) -> [k,3] -> box index column -> the kept boxes [k,4].
std::unique_ptr<ir::Graph> DetectorWithNms(std::mt19937& rng) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("image", DataType::kFloat32, {1, 3, 16, 16});
  ir::Value* c1 = b.Op("Conv",
                       {x, b.Initializer("w1", testing::UniformTensor({8, 3, 3, 3}, rng, 0.4f)),
                        b.Initializer("b1", testing::UniformTensor({8}, rng, 0.1f))},
                       {Attribute::Ints("pads", {1, 1, 1, 1})});
  ir::Value* head =
      b.Op("Conv", {b.Op("Relu", {c1}),
                    b.Initializer("w2", testing::UniformTensor({5, 8, 1, 1}, rng, 0.8f)),
                    b.Initializer("b2", testing::UniformTensor({5}, rng, 0.2f))});
  ir::Value* flat = b.Op("Reshape", {head, b.Initializer("flat", I64({3}, {1, 5, 256}))});
  ir::Value* axes = b.Initializer("axes", I64({1}, {1}));
  ir::Value* box_ch = b.Op("Slice", {flat, b.Initializer("s0", I64({1}, {0})),
                                     b.Initializer("e0", I64({1}, {4})), axes});
  ir::Value* boxes = b.Op("Transpose", {box_ch}, {Attribute::Ints("perm", {0, 2, 1})});
  ir::Value* scores = b.Op("Sigmoid", {b.Op("Slice", {flat, b.Initializer("s1", I64({1}, {4})),
                                                      b.Initializer("e1", I64({1}, {5})), axes})});
  ir::Value* kept =
      b.Op("NonMaxSuppression", {boxes, scores, b.Initializer("max_out", I64({1}, {20})),
                                 b.Initializer("iou", Tensor::FromVector<float>({1}, {0.5f})),
                                 b.Initializer("score", Tensor::FromVector<float>({1}, {0.55f}))});
  ir::Value* index = b.Op("Gather", {kept, b.Initializer("col", Tensor::Scalar<int64_t>(2))},
                          {Attribute::Int("axis", 1)});
  ir::Value* boxes2d = b.Op("Squeeze", {boxes, b.Initializer("axis0", I64({1}, {0}))});
  ir::OpOptions out;
  out.output_names = {"detections"};
  b.Output(b.Op("Gather", {boxes2d, index}, {Attribute::Int("axis", 0)}, out));
  return b.Build();
}

TEST(QuantizeDetectorNmsTest, CalibratesQuantizesAndRunsWithPostProcessing) {
  std::mt19937 rng(77);
  std::unique_ptr<ir::Graph> model = DetectorWithNms(rng);
  auto result =
      testing::QuantizeOn(*model, testing::UniformTensor({16, 3, 16, 16}, rng, 1.0f), "nms");
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
    Tensor x = testing::UniformTensor({1, 3, 16, 16}, rng, scales[trial]);
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
