// `qtune quantize --auto`: per-layer format search (docs/quantize.md "Auto mode").
//
//  1. Groups and candidates (auto_groups.h): the quantized layers that must share a format,
//     each with its candidate formats (pinned by the recipe, or dropped by a rule, say why).
//  2. Sensitivity (auto_sensitivity.h): for every group and candidate format, the model's
//     output SQNR against fp32 with only that group in that format, on `score_size`
//     calibration samples (logits before Sigmoid/Softmax, output_sqnr.h).
//  3. Cost (cost model "weight", ModelOpt's): bits per weight element x the group's weight
//     elements; cost model "latency": the group's measured time in qtune's engine per
//     format (auto_latency.h). Cost-excluded groups cost 0. Effective bits = sum of bits x
//     weights / weights counted (reported in both cost models).
//  4. Search (auto_search.h): per group one format, exact dynamic programming over the
//     discretized cost (greedy when too big), predicting SQNR from the single-group
//     noises. The frontier: `frontier_points` budgets from the cheapest to the dearest
//     choice, each predicted and measured as a whole.
//  5. The objective's choice is measured as a whole. --effective-bits and
//     --latency-budget: when a measured frontier choice within the budget beats it, that
//     one is taken (a correction, said); --latency-budget: when the whole model measures
//     slower than the budget, the budget given to the search shrinks by the overshoot and
//     it reruns (at most kMaxCorrections times).
//     --min-sqnr: when it misses the target, the allowed predicted noise shrinks by the
//     measured/predicted ratio and the search reruns (at most kMaxCorrections times); if
//     it still misses, the cheapest measured frontier choice reaching the target is taken,
//     else the best measured one (reached = false).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/auto_groups.h"
#include "quant/auto_latency.h"
#include "quant/calibration_data.h"
#include "quant/placement.h"
#include "quant/recipe.h"

namespace qtune::quant {

inline constexpr int kMaxCorrections = 4;

enum class AutoCostModel { kWeight, kLatency };
const char* AutoCostModelName(AutoCostModel model);  // "weight", "latency"

struct AutoOptions {
  std::vector<AutoFormat> candidate_formats = {AutoFormat::kInt8, AutoFormat::kFp32};
  int64_t score_size = 8;
  std::vector<std::string> cost_excluded_layers;  // node-name globs
  // The objective: exactly one set.
  std::optional<double> effective_bits;     // budget, 4..32 (cost model weight)
  std::optional<double> min_sqnr_db;        // least cost reaching this measured SQNR
  std::optional<double> latency_budget_ms;  // budget (cost model latency)
  // The cost min_sqnr_db minimizes; the budgets imply theirs.
  AutoCostModel cost_model = AutoCostModel::kWeight;
  LatencyOptions latency;      // cost model latency: how the engine is timed
  int frontier_points = 13;    // budgets measured for the frontier (>= 2)
  bool bf16_available = true;  // CpuHasBf16() in production
  int threads = 1;
  bool show_progress = true;
};

// AutoOptions from resolved settings (auto_settings.h); bf16_available = CpuHasBf16().
StatusOr<AutoOptions> MakeAutoOptions(const AutoSettings& settings);

struct AutoGroupResult {
  std::vector<std::string> nodes;
  int64_t weight_elements = 0;
  bool cost_excluded = false;
  bool pinned = false;
  std::vector<AutoFormat> formats;     // candidates
  std::vector<double> bits;            // per candidate: bits per weight element
  std::vector<double> sensitivity_db;  // per candidate: alone in that format (fp32 +inf)
  std::vector<double> latency_ms;      // cost model latency: per candidate, its steps' time
  AutoFormat chosen = AutoFormat::kFp32;
  std::string why;
  std::vector<std::string> notes;
};

struct AutoFrontierPoint {
  double effective_bits = 0;  // of the choice (not the budget asked)
  double predicted_ms = 0;    // cost model latency: attributed + unattributed step times
  double measured_ms = 0;     // cost model latency: the whole model, timed
  double predicted_db = 0;
  double measured_db = 0;
  std::vector<AutoFormat> formats;  // per group
};

struct AutoReport {
  std::string objective;   // "effective_bits", "min_sqnr_db" or "latency_budget_ms"
  std::string cost_model;  // "weight" or "latency"
  double target = 0;
  int64_t samples = 0;
  std::vector<std::string> measured;  // compared tensors
  std::vector<AutoGroupResult> groups;
  std::vector<AutoFrontierPoint> frontier;
  double effective_bits = 0;
  double predicted_db = 0;
  double measured_db = 0;
  double measured_ms = 0;      // cost model latency: the choice, timed as a whole
  double unattributed_ms = 0;  // cost model latency: steps of no group (auto_latency.h)
  bool reached = true;         // min_sqnr_db: measured >= target; effective_bits: fits the budget
  bool exact = true;           // the search was exact (dynamic programming), not greedy
  std::vector<std::string> corrections;  // what the whole-model measurement changed
  std::vector<std::string> notes;        // model-wide notes (bf16 unavailable, fp8 latency)
  std::vector<std::string> bf16_nodes;   // nodes qtune's engine runs in bfloat16
};

// REQUIRES: `plan` was made for `float_graph` by PlanQuantization with `recipe` and
// `sizes`, calibrated, guards applied. On success `plan` holds the chosen formats (float
// groups kept in float as the accuracy fallback does) and the report lists the bf16 nodes
// for the exported model's metadata (ExportApplied). Errors: options out of range, a
// cost-excluded glob that matches nothing, and the engine's, naming the layer.
StatusOr<AutoReport> RunAutoSearch(const ir::Graph& float_graph, QuantPlan& plan,
                                   const Recipe& recipe, const InputSizes& sizes,
                                   CalibrationSource& source, const AutoOptions& options);

}  // namespace qtune::quant
