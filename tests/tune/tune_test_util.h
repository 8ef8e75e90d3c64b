// Shared pieces of the tune tests: the fmnist model and data, fast tune options, and a
// copy of a model with one weight changed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "runtime/session.h"
#include "tune/tune.h"

namespace qtune::tune::testing {

inline const std::string kFmnistModel =
    std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
inline const std::string kFmnistCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";

// Tune options that finish in seconds on fmnist: 64 calibration samples, short measurements.
TuneOptions FastTuneOptions(std::vector<std::string> candidates);

// The name of the largest float initializer, and a copy of `model` with it scaled by
// `factor` (so outputs clearly differ).
std::string LargestWeightName(const ir::Graph& model);
std::unique_ptr<ir::Graph> WithScaledWeight(const ir::Graph& model, const std::string& name,
                                            float factor);

// The first `count` calibration samples as the model's inputs.
runtime::NamedTensors CalibInputs(int64_t count);

// Runs `graph` in a Session with `threads` (and SessionOptions::bf16) on `inputs`.
runtime::NamedTensors RunGraph(const ir::Graph& graph, int threads,
                               const runtime::NamedTensors& inputs, bool bf16 = false);

// True when every tensor has the same sizes and bytes.
bool SameOutputs(const runtime::NamedTensors& a, const runtime::NamedTensors& b);

}  // namespace qtune::tune::testing
