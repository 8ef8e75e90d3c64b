// Accuracy-driven fallback (`qtune quantize --min-sqnr DB`): after calibration and guards,
// keeps the layers whose quantization costs the model's outputs the most in floating
// point, most costly first, until the quantized model's outputs reach a target SQNR
// against the float model on a few calibration samples (docs/quantize.md).
//
//  1. Reference: the float graph's outputs on the first `max_samples` calibration samples.
//  2. Sensitivity: for every quantized layer (QuantPlan::quantized_nodes) the output SQNR
//     of a model where only that layer's inputs are quantized (one QDQ export and run per
//     layer, in qtune's engine). Lower = more sensitive.
//  3. Search: the whole plan is measured; if it misses the target, the k most sensitive
//     layers fall back (k doubling, then bisected: the smallest k that reaches the target),
//     never more than `max_float_fraction` of the quantized layers. Then each of the k is
//     tried quantized again, least sensitive first, and stays so if the target holds.
//     Unreachable: the best prefix measured (no layer in float if none beats the plan as
//     calibrated), reached = false.
//
// A layer falls back by leaving the consumer lists of the sites feeding it; a site all of
// whose consumers fall back is disabled instead (disabled_reason kAccuracyFallbackReason,
// consumers kept), and the layer gets a SkippedLayer saying why.
//
// Compared: every float32 graph output, or, for one computed by Sigmoid or Softmax, that
// op's input (the logits). SQNR of one tensor = 10 log10(sum ref^2 / sum (ref - q)^2) over
// all samples; the model's SQNR is the minimum over the compared tensors; a quantized tensor
// with NaN or inf scores -inf (output_sqnr.h). Options out of range (max_float_fraction
// outside [0, 1], a NaN target, no samples or threads) are InvalidArgument.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/calibration_data.h"
#include "quant/export_qdq.h"
#include "quant/quant_types.h"

namespace qtune::quant {

inline constexpr char kAccuracyFallbackReason[] = "accuracy fallback";

struct FallbackOptions {
  double min_sqnr_db = 30.0;         // the target
  int64_t max_samples = 8;           // first samples of the calibration source measured
  double max_float_fraction = 0.75;  // of the quantized layers; the search stops there
  int threads = 1;
  bool show_progress = true;
};

struct LayerSensitivity {
  std::string node;
  std::string op_type;
  double sqnr_db = 0;  // model output SQNR with only this layer quantized
};

struct FallbackReport {
  double target_db = 0;
  double sqnr_before_db = 0;  // the plan as calibrated
  double sqnr_after_db = 0;   // after the fallback
  bool reached = false;
  int64_t samples = 0;
  std::vector<std::string> measured;          // the tensors compared (outputs or logits)
  std::vector<LayerSensitivity> sensitivity;  // most sensitive first; empty when the plan
                                              // already reached the target
  std::vector<std::string> fallen_back;       // nodes now in float, most sensitive first
  // A quantized output that was NaN or inf with the plan as calibrated (it scored -inf dB:
  // NaN never counts as reaching the target); empty when none.
  std::string non_finite_output;
};

// `float_graph` is the graph the plan was made for (QuantizeModelResult::float_graph);
// `plan` has calibrated ranges and guards applied and is changed in place. Errors: a
// source with no samples, a model without float outputs, and export or engine errors
// (naming the layer being measured).
StatusOr<FallbackReport> FallBackSensitiveLayers(const ir::Graph& float_graph, QuantPlan& plan,
                                                 CalibrationSource& source,
                                                 const FallbackOptions& options);

// Keeps `nodes` in float: removes them from the consumers of every enabled site (a site
// whose consumers all fall back is disabled instead) and from plan.quantized_nodes, and
// records a SkippedLayer with reasons[i] for nodes[i] (none for an empty reason).
void KeepLayersInFloat(QuantPlan& plan, const std::vector<std::string>& nodes,
                       const std::vector<std::string>& reasons);

}  // namespace qtune::quant
