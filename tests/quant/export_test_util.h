// Helpers for the export and end-to-end quantization tests: the bundled Fashion-MNIST
// model and data, running a graph in qtune and in ONNX Runtime, top-1 and error measures.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "quant/quant_types.h"
#include "quant/quantize_model.h"

namespace qtune::quant::testing {

std::string FmnistModelPath();
std::string FmnistCalibPath();
std::string FmnistTestPath();
std::string FmnistLabelsPath();

// The fmnist model after passes::RunPipeline (what placement and export see).
std::unique_ptr<ir::Graph> LoadCleanFmnist();

// Rows [first, first + count) of a tensor along axis 0 (a deep copy).
Tensor Rows(const Tensor& t, int64_t first, int64_t count);

// Runs a one-input, one-output graph in qtune (oneDNN tier) and returns the output.
StatusOr<Tensor> RunQtune(const ir::Graph& graph, const std::string& input, const Tensor& x,
                          int threads = 1);
// Saves the graph to a temporary file and runs it in ONNX Runtime.
StatusOr<Tensor> RunOrtOn(const ir::Graph& graph, const std::string& tag, const std::string& input,
                          const Tensor& x);

// argmax along the last axis of a [N, C] float32 tensor.
std::vector<int64_t> Top1(const Tensor& logits);
// Fraction of equal entries.
double Agreement(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
std::vector<int64_t> Labels(const Tensor& labels);  // int64 [N]

// A hand-made plan: every Conv and Gemm gets a per-tensor activation quantizer on input 0
// (range: max calibration over the first calib_samples of calib_512.npy) and a per-channel
// weight quantizer on input 1.
QuantPlan HandMadePlan(const ir::Graph& graph, QuantFormat format, int64_t calib_samples = 128);

int CountOps(const ir::Graph& graph, const std::string& op_type);

// QuantizeModel with default options on `calib` (written to a temporary .npy named after
// `tag`, removed before returning), progress off.
StatusOr<QuantizeModelResult> QuantizeOn(const ir::Graph& model, const Tensor& calib,
                                         const std::string& tag);

}  // namespace qtune::quant::testing
