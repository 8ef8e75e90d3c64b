// SQNR of a quantized model's outputs against the float model's: the score of the accuracy
// fallback (accuracy_fallback.h) and of `qtune autotune --min-sqnr`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/calibration_data.h"
#include "runtime/session.h"

namespace qtune::quant {

struct OutputSqnr {
  // Minimum over the float32 tensors of 10 log10(sum ref^2 / sum (ref - q)^2), summed over
  // all batches. +inf when every tensor matches exactly; -inf (never reaches any target)
  // when a quantized tensor holds NaN or inf.
  double db = 0;
  // The first tensor whose quantized values are NaN or inf; empty when none.
  std::string non_finite_output;
};

// `reference` and `measured`: one NamedTensors per batch, the same names, sizes and dtypes
// in the same order (REQUIRES). Non-float32 tensors are not compared.
OutputSqnr MeasureOutputSqnr(const std::vector<runtime::NamedTensors>& reference,
                             const std::vector<runtime::NamedTensors>& measured);

// The first float32 tensor in `outputs` holding NaN or inf, or empty.
std::string FirstNonFiniteOutput(const std::vector<runtime::NamedTensors>& outputs);

// The float model's outputs on a few calibration samples, kept to score quantized models of
// it. Compared: every float32 graph output, or, for an output computed by Sigmoid or
// Softmax, that op's input (the logits): a saturated probability near 0 or 1 turns tiny
// logit changes into huge relative errors, or hides large ones.
class OutputComparer {
 public:
  // Runs `float_graph` on the first `max_samples` samples of `source` (at least one batch
  // of a fixed batch size). Errors: no full batch, no float32 output, NaN or inf in the
  // float model's own outputs, and the engine's.
  static StatusOr<std::unique_ptr<OutputComparer>> Create(const ir::Graph& float_graph,
                                                          CalibrationSource& source,
                                                          int64_t max_samples, int threads);

  // Runs `quantized` (a QDQ model of the same float graph: the compared tensors keep their
  // names) on the same samples and scores it. `bf16`: run it with SessionOptions::bf16
  // (the float graph itself, computed in bfloat16).
  StatusOr<OutputSqnr> Compare(const ir::Graph& quantized, bool bf16 = false) const;

  int64_t samples() const { return samples_; }
  const std::vector<std::string>& measured() const { return names_; }

 private:
  OutputComparer() = default;
  std::vector<runtime::NamedTensors> batches_;
  std::vector<runtime::NamedTensors> reference_;
  std::vector<std::string> names_;
  int64_t samples_ = 0;
  int threads_ = 1;
};

}  // namespace qtune::quant
