#include "runtime/dynamic_test_models.h"

#include <string>
#include <vector>

#include "ir/builder.h"

namespace qtune::testing {
namespace {

using ir::Attribute;
using ir::GraphBuilder;
using ir::Value;

constexpr int64_t kOpset = 17;

Value* Ints(GraphBuilder& b, const std::string& name, std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return b.Initializer(name, Tensor::FromVector<int64_t>({n}, v));
}

Value* Named(GraphBuilder& b, const std::string& op, std::vector<Value*> inputs,
             const std::string& output, std::vector<Attribute> attributes = {}) {
  return b.Op(op, std::move(inputs), std::move(attributes), {.output_names = {output}});
}

}  // namespace

std::unique_ptr<ir::Graph> BuildDetectorHead(int64_t num_boxes) {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {1, 3, 1, num_boxes});
  // Output channels: y1 = c0, x1 = c1, y2 = c0 + 1, x2 = c1 + 1, score0 = c2, score1 = -c2.
  std::vector<float> w = {1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1};
  Value* conv =
      b.Op("Conv", {x, b.Initializer("w", Tensor::FromVector<float>({6, 3, 1, 1}, w)),
                    b.Initializer("b", Tensor::FromVector<float>({6}, {0, 0, 1, 1, 0, 0}))});
  Value* head = b.Op("Reshape", {conv, Ints(b, "head_shape", {1, 6, num_boxes})});
  Value* box_cn =
      b.Op("Slice", {head, Ints(b, "b0", {0}), Ints(b, "b1", {4}), Ints(b, "ax1", {1})});
  Value* boxes = b.Op("Transpose", {box_cn}, {Attribute::Ints("perm", {0, 2, 1})});
  Value* scores =
      b.Op("Slice", {head, Ints(b, "s0", {4}), Ints(b, "s1", {6}), Ints(b, "ax1b", {1})});
  Value* selected = Named(b, "NonMaxSuppression",
                          {boxes, scores, Ints(b, "max_out", {20}),
                           b.Initializer("iou", Tensor::FromVector<float>({1}, {0.45f})),
                           b.Initializer("score_min", Tensor::FromVector<float>({1}, {0.5f}))},
                          "selected");
  Value* box_index = b.Op("Gather", {selected, b.Initializer("col2", Tensor::Scalar<int64_t>(2))},
                          {Attribute::Int("axis", 1)});
  Value* classes = Named(b, "Gather", {selected, b.Initializer("col1", Tensor::Scalar<int64_t>(1))},
                         "det_classes", {Attribute::Int("axis", 1)});
  Value* boxes_2d = b.Op("Squeeze", {boxes, Ints(b, "sq0", {0})});
  Value* det_boxes =
      Named(b, "Gather", {boxes_2d, box_index}, "det_boxes", {Attribute::Int("axis", 0)});
  Value* scores_2d = b.Op("Squeeze", {scores, Ints(b, "sq0b", {0})});
  Value* class_box =
      b.Op("Slice", {selected, Ints(b, "c0", {1}), Ints(b, "c1", {3}), Ints(b, "ax1c", {1})});
  Value* det_scores = Named(b, "GatherND", {scores_2d, class_box}, "det_scores");
  b.Output(det_boxes);
  b.Output(det_scores);
  b.Output(classes);
  b.Output(selected);
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildNonZeroGather() {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {3, 4});
  Value* nz = b.Op("NonZero", {x});
  Value* idx = b.Op("Transpose", {nz}, {Attribute::Ints("perm", {1, 0})});
  b.Output(Named(b, "GatherND", {x, idx}, "values"));
  b.Output(Named(b, "Identity", {idx}, "coords"));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildCompressThreshold(int64_t n) {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {n});
  Value* m = b.Input("m", DataType::kFloat32, {n, 3});
  Value* keep = b.Op("Greater", {x, b.Initializer("t", Tensor::Scalar<float>(0.25f))});
  Value* kept = b.Op("Compress", {x, keep});
  b.Output(Named(b, "Mul", {kept, b.Initializer("two", Tensor::Scalar<float>(2))}, "kept"));
  Value* col0 = b.Op("Gather", {m, b.Initializer("zero", Tensor::Scalar<int64_t>(0))},
                     {Attribute::Int("axis", 1)});
  Value* rows = b.Op("Greater", {col0, b.Initializer("t0", Tensor::Scalar<float>(0))});
  b.Output(Named(b, "Compress", {m, rows}, "rows", {Attribute::Int("axis", 0)}));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildTopKInput(int64_t n) {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {n});
  Value* k = b.Input("k", DataType::kInt64, {1});
  std::vector<Value*> top =
      b.MultiOp("TopK", {x, k}, 2, {}, {.output_names = {"top_values", "top_indices"}});
  b.Output(Named(b, "Neg", {top[0]}, "neg_values"));
  b.Output(top[1]);
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildUnique(int64_t n) {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {n});
  for (bool sorted : {true, false}) {
    const std::string p = sorted ? "" : "u_";
    std::vector<Value*> u =
        b.MultiOp("Unique", {x}, 4, {Attribute::Int("sorted", sorted ? 1 : 0)},
                  {.output_names = {p + "y", p + "indices", p + "inverse", p + "counts"}});
    for (Value* v : u) b.Output(v);
  }
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildReshapeInput() {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {6});
  Value* shape = b.Input("shape", DataType::kInt64, {2});
  Value* r = b.Op("Reshape", {x, shape}, {}, {.name = "reshape"});
  b.Output(Named(b, "Softmax", {r}, "y", {Attribute::Int("axis", -1)}));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildExpandInput(int64_t shape_rank) {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {1, 3});
  Value* shape = b.Input("shape", DataType::kInt64, {shape_rank});
  Value* e = b.Op("Expand", {x, shape});
  b.Output(Named(b, "Add", {e, b.Initializer("one", Tensor::Scalar<float>(1))}, "y"));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildTileInput() {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {2, 2});
  Value* repeats = b.Input("repeats", DataType::kInt64, {2});
  b.Output(Named(b, "Relu", {b.Op("Tile", {x, repeats})}, "y"));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildRangeInput() {
  GraphBuilder b(kOpset);
  Value* start = b.Input("start", DataType::kInt64, std::vector<int64_t>{});
  Value* limit = b.Input("limit", DataType::kInt64, std::vector<int64_t>{});
  Value* delta = b.Input("delta", DataType::kInt64, std::vector<int64_t>{});
  Value* r = b.Op("Range", {start, limit, delta});
  Value* f = b.Op("Cast", {r}, {Attribute::Int("to", 1)});  // float
  b.Output(Named(b, "Mul", {f, b.Initializer("half", Tensor::Scalar<float>(0.5f))}, "y"));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildConstantOfShapeInput(int64_t shape_rank) {
  GraphBuilder b(kOpset);
  Value* shape = b.Input("shape", DataType::kInt64, {shape_rank});
  Value* c = b.Op("ConstantOfShape", {shape},
                  {Attribute::TensorValue("value", Tensor::FromVector<float>({1}, {1.5f}))},
                  {.name = "fill"});
  b.Output(Named(b, "Mul", {c, b.Initializer("two", Tensor::Scalar<float>(2))}, "y"));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildSliceInput() {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {10});
  Value* starts = b.Input("starts", DataType::kInt64, {1});
  Value* ends = b.Input("ends", DataType::kInt64, {1});
  b.Output(Named(b, "Neg", {b.Op("Slice", {x, starts, ends})}, "y"));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildPadInput() {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3});
  Value* pads = b.Input("pads", DataType::kInt64, {4});
  Value* p = b.Op("Pad", {x, pads, b.Initializer("value", Tensor::Scalar<float>(0.5f))});
  b.Output(Named(b, "Sigmoid", {p}, "y"));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildResizeInput() {
  GraphBuilder b(kOpset);
  Value* x = b.Input("x", DataType::kFloat32, {1, 1, 2, 2});
  Value* sizes = b.Input("sizes", DataType::kInt64, {4});
  Value* r = b.Op("Resize", {x, nullptr, nullptr, sizes}, {Attribute::String("mode", "nearest")});
  b.Output(Named(b, "Relu", {r}, "y"));
  return b.Build();
}

}  // namespace qtune::testing
