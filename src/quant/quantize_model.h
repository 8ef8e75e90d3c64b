// The whole post-training quantization flow behind `qtune quantize`, as a library call:
//   clean copy (passes::RunPipeline) -> recipe + command-line settings -> placement ->
//   calibration of the enabled activation sites -> guards -> optional accuracy fallback ->
//   QDQ export -> summary.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/accuracy_fallback.h"
#include "quant/auto_quantize.h"
#include "quant/export_qdq.h"
#include "quant/ort_layout.h"
#include "quant/quant_types.h"
#include "quant/recipe.h"
#include "quant/summary.h"

namespace qtune::quant {

struct QuantizeModelOptions {
  std::string recipe = "int8";  // preset name or YAML file
  // Command-line settings; unset = the recipe's (or the default). A value contradicting
  // the recipe is an InvalidArgument error.
  std::optional<Target> target;
  std::optional<CalibratorKind> calibrator;
  std::optional<double> percentile;  // requires the percentile calibrator
  // Calibration data (calibration_data.h specs) and the image preprocess spec.
  std::vector<std::string> calib_specs;
  std::string preprocess;
  // Uniform random calibration data instead of calib_specs: the scales mean nothing.
  bool random_calibration = false;
  int64_t random_samples = 64;
  uint64_t random_seed = 0;  // the random samples' seed (--seed)
  // Rules applied after the recipe's own, in order (--exclude, --exclude-op,
  // --asymmetric-activations).
  std::vector<QuantizerRule> extra_rules;
  int64_t max_calib_samples = 0;                  // 0: all
  int64_t calib_batch = 0;                        // <= 0: from calib_memory_bytes
  int64_t calib_memory_bytes = int64_t{1} << 30;  // calibration batch budget
  int threads = 1;
  bool show_progress = true;
  // Accuracy-driven fallback after the guards (accuracy_fallback.h), as the command line
  // gives it; the recipe's accuracy_fallback block must agree. Runs when either sets
  // min_sqnr_db.
  FallbackSettings fallback;
  // Per-layer format search after the guards (auto_quantize.h): --auto and its flags; the
  // recipe's auto: block must agree, and turns it on by itself (auto_settings.h).
  bool auto_mode = false;
  AutoSettings auto_settings;
  // false: stop after calibration and guards (the summary without a model; --report).
  bool export_model = true;
  ExportOptions export_options;
  // The layout written for Target::kOrt (ort_layout.h); its calibrator is replaced by the
  // effective one. The recipe's formats and symmetry do not apply to that target.
  OrtLayoutOptions ort_layout;
};

struct QuantizeModelResult {
  std::unique_ptr<ir::Graph> float_graph;  // the cleaned float graph the plan refers to
  std::unique_ptr<ir::Graph> quantized;    // null when !export_model
  QuantPlan plan;                          // with ranges and guard results
  ExportReport export_report;
  QuantSummary summary;
  std::optional<FallbackReport> fallback;  // when the accuracy fallback ran
  std::optional<AutoReport> auto_report;   // when the format search ran
  std::string calibration_source;          // CalibrationSource::Describe()
};

// The quantized ops a model already holds ("2 MatMulNBits nodes, 40 DequantizeLinear
// nodes"): Q/DQ pairs, QLinear* and *Integer ops, ONNX Runtime's MatMulNBits. "" for a float
// model.
std::string QuantizedOpsIn(const ir::Graph& model);

// Errors: a model that is already quantized (InvalidArgument listing QuantizedOpsIn: its
// float weights are gone), no calibration data without random_calibration
// (InvalidArgument, says what to pass), a recipe that does not load or contradicts the
// settings, and every stage's own.
StatusOr<QuantizeModelResult> QuantizeModel(const ir::Graph& model,
                                            const QuantizeModelOptions& options);

}  // namespace qtune::quant
