#include "quant/quantize_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "passes/pipeline.h"
#include "quant/auto_settings.h"
#include "quant/awq.h"
#include "quant/calibrate.h"
#include "quant/calibration_data.h"
#include "quant/lowbit_checks.h"
#include "quant/placement.h"
#include "quant/recipe.h"
#include "runtime/reference/registry.h"
#include "runtime/session.h"

namespace qtune::quant {
namespace {

StatusOr<std::unique_ptr<CalibrationSource>> OpenSource(const ir::Graph& graph,
                                                        const QuantizeModelOptions& options) {
  if (options.random_calibration) {
    if (!options.calib_specs.empty()) {
      return InvalidArgumentError("--random-calibration and --calib exclude each other");
    }
    RandomDataOptions random;
    random.num_samples = options.random_samples;
    random.seed = options.random_seed;
    return MakeRandomCalibrationData(graph, random);
  }
  if (options.calib_specs.empty()) {
    return InvalidArgumentError(
        "no calibration data: pass --calib FILE.npy|FILE.npz|DIR (a few hundred real "
        "samples), or --random-calibration to quantize with meaningless scales");
  }
  return OpenCalibrationData(options.calib_specs, options.preprocess, graph);
}

// Sizes of every graph input for placement's shape inference: one calibration batch.
StatusOr<InputSizes> FirstBatchSizes(CalibrationSource& source, int64_t batch) {
  if (source.num_samples() <= 0) {
    return InvalidArgumentError(source.Describe() + " holds no samples");
  }
  ASSIGN_OR_RETURN(auto tensors,
                   source.Batch(0, std::clamp<int64_t>(batch, 1, source.num_samples())));
  InputSizes sizes;
  for (const auto& [name, t] : tensors) sizes[name] = t.sizes();
  return sizes;
}

Status CalibrateSites(const ir::Graph& graph, QuantPlan& plan, CalibrationSource& source,
                      const QuantizeModelOptions& options) {
  std::map<std::string, CalibrationRequest> requests;
  for (const QuantSite& site : plan.sites) {
    if (site.kind != QuantSite::Kind::kActivation || !site.enabled || !site.config.enable) continue;
    requests.emplace(site.value, CalibrationRequest{site.config.calibrator, site.config.format});
  }
  if (requests.empty()) return Status::Ok();
  CalibrateOptions calibrate;
  calibrate.batch_size = options.calib_batch;
  calibrate.memory_budget_bytes = options.calib_memory_bytes;
  calibrate.max_samples = options.max_calib_samples;
  calibrate.threads = options.threads;
  calibrate.show_progress = options.show_progress;
  ASSIGN_OR_RETURN(auto ranges, CalibrateActivations(graph, requests, source, calibrate));
  for (QuantSite& site : plan.sites) {
    auto it = ranges.find(site.value);
    if (site.kind == QuantSite::Kind::kActivation && it != ranges.end()) site.range = it->second;
  }
  return Status::Ok();
}

}  // namespace

std::string QuantizedOpsIn(const ir::Graph& model) {
  static const char* const kQuantizedOps[] = {
      "QuantizeLinear", "DequantizeLinear",      "QLinearConv",         "QLinearMatMul",
      "MatMulNBits",    "MatMulInteger",         "ConvInteger",         "DynamicQuantizeLinear",
      "QGemm",          "DynamicQuantizeMatMul", "MatMulIntegerToFloat"};
  std::map<std::string, int64_t> counts;  // op type -> nodes
  for (const ir::Node* node : model.nodes()) {
    for (const char* op : kQuantizedOps) {
      if (node->op_type() == op) ++counts[op];
    }
  }
  std::string found;
  for (const auto& [op, n] : counts) {
    found += fmt::format("{}{} {} node{}", found.empty() ? "" : ", ", n, op, n == 1 ? "" : "s");
  }
  return found;
}

StatusOr<QuantizeModelResult> QuantizeModel(const ir::Graph& model,
                                            const QuantizeModelOptions& options) {
  if (const std::string found = QuantizedOpsIn(model); !found.empty()) {
    return InvalidArgumentError("the model is already quantized (" + found +
                                "); quantize the float model it came from");
  }
  QuantizeModelResult result;
  result.float_graph = model.Clone();
  passes::PassOptions pass_options;
  pass_options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs, int64_t opset) {
    return runtime::EvaluateNode(node, inputs, opset);
  };
  ASSIGN_OR_RETURN(auto pipeline, passes::RunPipeline(*result.float_graph, pass_options));
  (void)pipeline;

  ASSIGN_OR_RETURN(Recipe recipe, LoadRecipe(options.recipe));
  recipe.quantizers.insert(recipe.quantizers.end(), options.extra_rules.begin(),
                           options.extra_rules.end());
  CliOverrides overrides{options.target, options.calibrator, options.fallback};
  ASSIGN_OR_RETURN(EffectiveSettings settings, ResolveCliOverrides(recipe, overrides));
  if (options.percentile.has_value()) {
    if (settings.calibrator.kind != CalibratorKind::kPercentile) {
      return InvalidArgumentError(fmt::format(
          "--percentile needs the percentile calibrator, but the calibrator is '{}' (add "
          "--calibrator percentile)",
          CalibratorName(settings.calibrator.kind)));
    }
    settings.calibrator.percentile = *options.percentile;
  }
  recipe.calibrator = settings.calibrator;
  ASSIGN_OR_RETURN(
      std::optional<AutoSettings> auto_settings,
      ResolveAutoSettings(recipe, options.auto_mode, options.auto_settings, settings.target));

  // Low-bit usage errors (a forced block that does not fit, int4 on activations, a target
  // that cannot take the format) before any calibration work.
  RETURN_IF_ERROR(CheckLowBitRecipe(*result.float_graph, recipe, settings.target));
  ASSIGN_OR_RETURN(auto source, OpenSource(*result.float_graph, options));
  result.calibration_source = source->Describe();
  ASSIGN_OR_RETURN(InputSizes sizes, FirstBatchSizes(*source, options.calib_batch));
  OrtLayoutOptions ort_layout = options.ort_layout;
  ort_layout.calibrator = settings.calibrator;
  // Low-bit weight recipes use qtune's placement on every target (ort: MatMulNBits).
  const bool ort_layout_plan = settings.target == Target::kOrt && !RecipeHasLowBitRules(recipe);
  if (ort_layout_plan) {
    ASSIGN_OR_RETURN(result.plan, PlanOrtLayout(*result.float_graph, sizes, ort_layout, &recipe));
  } else {
    ASSIGN_OR_RETURN(result.plan,
                     PlanQuantization(*result.float_graph, recipe, settings.target, sizes));
  }
  RETURN_IF_ERROR(CalibrateSites(*result.float_graph, result.plan, *source, options));
  WeightSearchOptions weight_search;
  weight_search.threads = options.threads;
  RETURN_IF_ERROR(SearchWeightScales(*result.float_graph, result.plan, *source, weight_search));
  ApplyGuards(result.plan);
  if (settings.fallback.min_sqnr_db.has_value()) {
    FallbackOptions fallback;
    fallback.min_sqnr_db = *settings.fallback.min_sqnr_db;
    fallback.max_samples = settings.fallback.samples.value_or(fallback.max_samples);
    fallback.max_float_fraction =
        settings.fallback.max_float_fraction.value_or(fallback.max_float_fraction);
    fallback.threads = options.threads;
    fallback.show_progress = options.show_progress;
    ASSIGN_OR_RETURN(result.fallback,
                     FallBackSensitiveLayers(*result.float_graph, result.plan, *source, fallback));
  }

  if (auto_settings.has_value()) {
    ASSIGN_OR_RETURN(AutoOptions auto_options, MakeAutoOptions(*auto_settings));
    auto_options.threads = options.threads;
    auto_options.show_progress = options.show_progress;
    ASSIGN_OR_RETURN(result.auto_report, RunAutoSearch(*result.float_graph, result.plan, recipe,
                                                       sizes, *source, auto_options));
  }

  if (options.export_model) {
    result.quantized = result.float_graph->Clone();
    if (ort_layout_plan) {
      ASSIGN_OR_RETURN(result.export_report,
                       ExportOrtLayout(*result.quantized, result.plan, ort_layout));
    } else {
      ASSIGN_OR_RETURN(result.export_report,
                       ExportQdq(*result.quantized, result.plan, options.export_options));
    }
    if (result.auto_report && !result.auto_report->bf16_nodes.empty()) {
      std::string names;
      for (const std::string& n : result.auto_report->bf16_nodes) {
        names += (names.empty() ? "" : ",") + n;
      }
      result.quantized->info().metadata_props.emplace_back(runtime::kBf16NodesMetadataKey, names);
    }
  }
  result.summary = BuildSummary(*result.float_graph, result.plan,
                                options.export_model ? &result.export_report : nullptr);
  result.summary.fallback = result.fallback;
  return result;
}

}  // namespace qtune::quant
