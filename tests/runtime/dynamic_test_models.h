// Models whose output sizes depend on input values (data-dependent sizes), built with the
// GraphBuilder for dynamic_models_test. Every model is valid ONNX that ONNX Runtime runs.
#pragma once

#include <memory>

#include "ir/graph.h"

namespace qtune::testing {

// A tiny detector head with post-processing. Input x [1, 3, 1, N]: a 1x1 Conv makes boxes
// [y, x, y + 1, x + 1] from channels 0 and 1 and two class scores (c2, -c2) from channel
// 2; NonMaxSuppression (at most 20 per class, IoU 0.45, score > 0.5) selects; Gathers
// pick the selected boxes, scores and classes. Outputs det_boxes [K, 4], det_scores [K],
// det_classes [K] (int64), selected [K, 3].
std::unique_ptr<ir::Graph> BuildDetectorHead(int64_t num_boxes);

// x [3, 4] -> NonZero -> Transpose -> GatherND(x): the non-zero values, [K].
std::unique_ptr<ir::Graph> BuildNonZeroGather();

// x [N] -> Compress(x, x > 0.25) [K]; m [N, 3] -> Compress(m, m[:, 0] > 0, axis 0) [K2, 3].
std::unique_ptr<ir::Graph> BuildCompressThreshold(int64_t n);

// x [N], k [1] (int64 input) -> TopK values and indices [k].
std::unique_ptr<ir::Graph> BuildTopKInput(int64_t n);

// x [N] -> Unique (sorted) Y, indices, inverse_indices, counts; the same unsorted on
// x + 0 (outputs u_*).
std::unique_ptr<ir::Graph> BuildUnique(int64_t n);

// Shape-computing ops whose size inputs are graph inputs. Each has input "x" (float) and
// the named int64 inputs:
//   Reshape(x [6], shape [2]); Expand(x [1, 3], shape [S]); Tile(x [2, 2], repeats [2]);
//   Range(start, limit, delta: int64 scalars, no x); ConstantOfShape(shape [S], no x);
//   Slice(x [10], starts [1], ends [1]); Pad(x [2, 3], pads [4]);
//   Resize(x [1, 1, 2, 2], sizes [4], nearest).
// The Reshape node is named "reshape" and the ConstantOfShape node "fill".
std::unique_ptr<ir::Graph> BuildReshapeInput();
std::unique_ptr<ir::Graph> BuildExpandInput(int64_t shape_rank);
std::unique_ptr<ir::Graph> BuildTileInput();
std::unique_ptr<ir::Graph> BuildRangeInput();
std::unique_ptr<ir::Graph> BuildConstantOfShapeInput(int64_t shape_rank);
std::unique_ptr<ir::Graph> BuildSliceInput();
std::unique_ptr<ir::Graph> BuildPadInput();
std::unique_ptr<ir::Graph> BuildResizeInput();

}  // namespace qtune::testing
