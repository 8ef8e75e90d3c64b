// ONNX Runtime as the external oracle in tests: runs a model through tools/ort/ort_run.js
// (onnxruntime-node, installed by scripts/install_deps.sh) and reads its outputs back.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace qtune::testing {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// True when node and tools/ort/node_modules/onnxruntime-node are present.
bool OrtAvailable();

// Runs `model_path` in ONNX Runtime with `threads` intra-op threads and returns the
// outputs named in `output_names`, in that order.
StatusOr<NamedTensors> RunOrt(const std::string& model_path, const NamedTensors& inputs,
                              const std::vector<std::string>& output_names, int threads = 1);

// ||a - b||_2 / max(||b||_2, tiny), over float32 tensors of equal element count; +inf if
// the sizes differ.
double RelativeL2(const Tensor& a, const Tensor& b);

// Largest |a - b| over float32 tensors of equal element count; +inf if the sizes differ.
double MaxAbsDiff(const Tensor& a, const Tensor& b);

}  // namespace qtune::testing
