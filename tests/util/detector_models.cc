#include "util/detector_models.h"

#include "ir/builder.h"
#include "util/random_tensor.h"

namespace qtune::testing {
namespace {

using ir::Attribute;

Tensor I64(std::vector<int64_t> sizes, std::vector<int64_t> values) {
  return Tensor::FromVector<int64_t>(std::move(sizes), values);
}

}  // namespace

std::unique_ptr<ir::Graph> BuildDetectorWithNms(std::mt19937& rng) {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("image", DataType::kFloat32, {1, 3, 16, 16});
  ir::Value* c1 = b.Op("Conv",
                       {x, b.Initializer("w1", UniformTensor({8, 3, 3, 3}, rng, 0.4f)),
                        b.Initializer("b1", UniformTensor({8}, rng, 0.1f))},
                       {Attribute::Ints("pads", {1, 1, 1, 1})});
  ir::Value* head =
      b.Op("Conv", {b.Op("Relu", {c1}), b.Initializer("w2", UniformTensor({5, 8, 1, 1}, rng, 0.8f)),
                    b.Initializer("b2", UniformTensor({5}, rng, 0.2f))});
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

}  // namespace qtune::testing
