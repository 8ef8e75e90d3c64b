// NonMaxSuppression (opsets 10, 11), the reference kernel. Per batch and class: the boxes
// whose score is above score_threshold (all boxes when that input is omitted) are visited
// by descending score, ties by ascending box index; a box is kept unless its IoU with an
// already kept box of the same class is above iou_threshold; at most
// max_output_boxes_per_class are kept (omitted, empty or <= 0: none). The output is
// int64 [num_selected, 3] of (batch, class, box), in batch, class, then selection order.
// A box of zero area never suppresses nor is suppressed. Arithmetic is in float32, as in
// ONNX's reference implementation and ONNX Runtime, so equal inputs give equal decisions.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

// A box as [min, max] intervals on both axes.
struct Box {
  float y_min, x_min, y_max, x_max;
};

Box MakeBox(const float* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    const float half_w = b[2] / 2, half_h = b[3] / 2;
    return {b[1] - half_h, b[0] - half_w, b[1] + half_h, b[0] + half_w};
  }
  // [y1, x1, y2, x2], any diagonal pair of corners.
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// True when the IoU of a and b is above `threshold` (the ONNX reference's test, step by
// step: no overlap, empty boxes and an empty union never suppress).
bool Suppresses(const Box& a, const Box& b, float threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float intersection = (ix_max - ix_min) * (iy_max - iy_min);
  if (intersection <= 0) return false;
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > threshold;
}

// Reads optional scalar input `i` (absent or empty: `fallback`).
StatusOr<double> OptionalScalar(const KernelArgs& a, size_t i, std::string_view what,
                                double fallback) {
  if (!HasInput(a, i) || a.inputs[i].num_elements() == 0) return fallback;
  return ReadScalarAsDouble(a.node, a.inputs[i], what);
}

Outputs NonMaxSuppression(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 5));
  const Tensor& boxes = a.inputs[0];
  const Tensor& scores = a.inputs[1];
  if (boxes.dtype() != DataType::kFloat32) return UnsupportedType(a.node, boxes.dtype(), "boxes");
  if (scores.dtype() != DataType::kFloat32) {
    return UnsupportedType(a.node, scores.dtype(), "scores");
  }
  if (boxes.rank() != 3 || boxes.size(2) != 4) {
    return NodeError(a.node,
                     "boxes must be [num_batches, num_boxes, 4], got " + Bracketed(boxes.sizes()));
  }
  if (scores.rank() != 3 || scores.size(0) != boxes.size(0) || scores.size(2) != boxes.size(1)) {
    return NodeError(a.node, "scores must be [num_batches, num_classes, num_boxes] = [" +
                                 std::to_string(boxes.size(0)) + ",C," +
                                 std::to_string(boxes.size(1)) + "] for boxes " +
                                 Bracketed(boxes.sizes()) + ", got " + Bracketed(scores.sizes()));
  }
  const int64_t center_point_box = a.node.GetInt("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1) {
    return NodeError(a.node,
                     "center_point_box must be 0 or 1, got " + std::to_string(center_point_box));
  }
  int64_t max_per_class = 0;
  if (HasInput(a, 2) && a.inputs[2].num_elements() != 0) {
    ASSIGN_OR_RETURN(max_per_class,
                     ReadIndexScalar(a.node, a.inputs[2], "max_output_boxes_per_class"));
  }
  ASSIGN_OR_RETURN(double iou_threshold, OptionalScalar(a, 3, "iou_threshold", 0.0));
  const bool filter_scores = HasInput(a, 4) && a.inputs[4].num_elements() != 0;
  ASSIGN_OR_RETURN(double score_threshold, OptionalScalar(a, 4, "score_threshold", 0.0));
  const float iou = static_cast<float>(iou_threshold);
  const float score_min = static_cast<float>(score_threshold);

  const int64_t num_batches = boxes.size(0), num_boxes = boxes.size(1);
  const int64_t num_classes = scores.size(1);
  const float* box_data = boxes.data<float>();
  const float* score_data = scores.data<float>();
  std::vector<int64_t> selected;  // (batch, class, box) triples
  std::vector<int64_t> candidates;
  std::vector<Box> kept;
  for (int64_t b = 0; b < num_batches && max_per_class > 0; ++b) {
    std::vector<Box> batch_boxes(static_cast<size_t>(num_boxes));
    for (int64_t i = 0; i < num_boxes; ++i) {
      batch_boxes[i] = MakeBox(box_data + (b * num_boxes + i) * 4, center_point_box == 1);
    }
    for (int64_t c = 0; c < num_classes; ++c) {
      const float* s = score_data + (b * num_classes + c) * num_boxes;
      candidates.clear();
      for (int64_t i = 0; i < num_boxes; ++i) {
        if (!filter_scores || s[i] > score_min) candidates.push_back(i);
      }
      // Descending score, then ascending index; NaN scores go last.
      std::stable_sort(candidates.begin(), candidates.end(), [&](int64_t p, int64_t q) {
        if (std::isnan(s[q])) return !std::isnan(s[p]);
        return s[p] > s[q];
      });
      kept.clear();
      for (int64_t i : candidates) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        const Box& box = batch_boxes[i];
        bool keep = std::none_of(kept.begin(), kept.end(),
                                 [&](const Box& k) { return Suppresses(box, k, iou); });
        if (!keep) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  const int64_t count = static_cast<int64_t>(selected.size()) / 3;
  auto y = Tensor::Allocate(DataType::kInt64, {count, 3});
  if (!y.ok()) return y.status().WithContext(a.node.DebugName());
  std::copy(selected.begin(), selected.end(), y->data<int64_t>());
  return std::vector<Tensor>{std::move(y).value()};
}

}  // namespace

void RegisterDetectionKernels(ReferenceRegistry& r) {
  r.Register("NonMaxSuppression", NonMaxSuppression);
}

}  // namespace qtune::runtime::reference
