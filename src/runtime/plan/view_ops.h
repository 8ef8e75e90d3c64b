// Data-movement ops that the plan runs as views: Reshape, Squeeze, Unsqueeze and Flatten
// keep the bytes of their input in the same order, so their output is a kAlias of the
// input's plain-layout value (no step, no copy, no arena buffer of its own).
#pragma once

#include "runtime/kernels/kernel.h"

namespace qtune::runtime {

// True when `request`'s node can be a view of its input 0 in kPlain: one of the ops above,
// in the ONNX domain, output 0 of the input's type and element count, and every other input
// (shape, axes) a compile-time constant or omitted.
bool IsViewNode(const KernelRequest& request);

}  // namespace qtune::runtime
