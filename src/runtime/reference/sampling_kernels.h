// The reference sampling kernels: GridSample (sampling_grid_sample.cc) and RoiAlign
// (sampling_roi_align.cc). They compute in double and return X's element type (float16,
// bfloat16, float32, float64).
#pragma once

#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::reference {

// X [N, C, D1..Dr] sampled at grid [N, O1..Or, r] (normalized coordinates in [-1, 1], the
// last one for Dr) -> [N, C, O1..Or]. Any r >= 1 (opset 16 models use r = 2).
StatusOr<std::vector<Tensor>> GridSample(const KernelArgs& args);
// X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R] -> [R, C, oh, ow].
StatusOr<std::vector<Tensor>> RoiAlign(const KernelArgs& args);

}  // namespace qtune::runtime::reference
