// SaveTuned / LoadTuned: the tuner's side of the checkpoint (checkpoint.h holds the file
// layer). The manifest's "tuning" block is described in docs/formats/checkpoint.md.
#include <fmt/format.h>

#include <set>

#include "core/logging.h"
#include "passes/pipeline.h"
#include "quant/export_qdq.h"
#include "quant/plan_json.h"
#include "runtime/reference/registry.h"
#include "tune/checkpoint.h"
#include "tune/tune.h"

namespace qtune::tune {
namespace {

using nlohmann::json;

constexpr char kPlanEntry[] = "plan.json";

StatusOr<InputSizes> InputSizesFromJson(const json& j, const std::string& where) {
  if (!j.is_object())
    return DataLossError(where + ": field 'tuning.input_sizes' must be an object");
  InputSizes sizes;
  for (const auto& [name, dims] : j.items()) {
    if (!dims.is_array()) {
      return DataLossError(
          fmt::format("{}: field 'tuning.input_sizes.{}' must be an array", where, name));
    }
    std::vector<int64_t> d;
    for (const json& x : dims) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0) {
        return DataLossError(
            fmt::format("{}: field 'tuning.input_sizes.{}' must hold sizes >= 0", where, name));
      }
      d.push_back(x.get<int64_t>());
    }
    sizes[name] = std::move(d);
  }
  return sizes;
}

// Zeros of `sizes` for every graph input.
StatusOr<runtime::NamedTensors> ZeroInputs(const ir::Graph& graph, const InputSizes& sizes) {
  runtime::NamedTensors inputs;
  for (const ir::Value* input : graph.inputs()) {
    auto it = sizes.find(input->name());
    if (it == sizes.end()) {
      return InvalidArgumentError(fmt::format(
          "the checkpoint records no input sizes for model input '{}': is this the model it "
          "was tuned for?",
          input->name()));
    }
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(input->dtype(), it->second));
    inputs.emplace_back(input->name(), std::move(t));
  }
  return inputs;
}

}  // namespace

StatusOr<std::unique_ptr<ir::Graph>> BuildTunedGraph(const ir::Graph& model,
                                                     const quant::QuantPlan* plan) {
  auto graph = model.Clone();
  passes::PassOptions pass_options;
  pass_options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs, int64_t opset) {
    return runtime::EvaluateNode(node, inputs, opset);
  };
  ASSIGN_OR_RETURN(auto report, passes::RunPipeline(*graph, pass_options));
  (void)report;
  if (plan != nullptr) {
    ASSIGN_OR_RETURN(auto exported, quant::ExportQdq(*graph, *plan, quant::ExportOptions{}));
    (void)exported;
  }
  return graph;
}

Status SaveTuned(const std::string& path, const TuneResult& result) {
  const TuneRow& row = result.chosen_row();
  CheckpointContents contents;
  contents.manifest = NewCheckpointManifest();
  contents.manifest.weights = result.weights;
  json sizes = json::object();
  for (const auto& [name, dims] : result.input_sizes) sizes[name] = dims;
  auto plan = result.plans.find(row.candidate);
  const bool quantized = row.candidate != "fp32" && row.candidate != "bf16";
  if (quantized && plan == result.plans.end()) {
    return InternalError(fmt::format("tune result: no plan for the chosen '{}'", row.candidate));
  }
  contents.manifest.tuning = {
      {"candidate", row.candidate},      {"threads", row.threads},
      {"strategy", result.strategy},     {"strategy_note", result.strategy_note},
      {"input_sizes", std::move(sizes)}, {"table", TuneTableToJson(result)},
      {"recipe", result.recipe},         {"min_sqnr_db", result.min_sqnr_db},
      {"cpu", result.cpu_note},          {"plan", quantized ? json(kPlanEntry) : json(nullptr)}};
  if (quantized) contents.files[kPlanEntry] = quant::PlanToJsonText(plan->second);
  return SaveCheckpoint(path, contents);
}

StatusOr<TunedSession> LoadTunedSession(const ir::Graph& model, const std::string& checkpoint,
                                        const LoadTunedOptions& options) {
  LoadCheckpointOptions load;
  load.verify = options.verify;
  load.cache_dir = options.cache_dir;
  ASSIGN_OR_RETURN(LoadedCheckpoint loaded, LoadCheckpoint(checkpoint, load));
  const std::string where = fmt::format("'{}' manifest.json", checkpoint);

  TunedSession out;
  out.reused_cache = loaded.reused_cache;
  out.tuning = loaded.manifest.tuning;
  Status weights = CheckWeights(loaded.manifest.weights, model);
  if (!weights.ok()) {
    if (!options.allow_weight_mismatch) return InvalidArgumentError(weights.message());
    out.weight_warning = weights.message();
    QTUNE_LOG_WARNING(
        "--allow-weight-mismatch: {} Rebuilding from the supplied weights with the stored "
        "decisions; the tuned figures (SQNR, latency) do not describe this model",
        weights.message());
  }

  const json& tuning = loaded.manifest.tuning;
  if (!tuning.is_object()) return DataLossError(where + ": field 'tuning' must be an object");
  auto candidate = tuning.find("candidate");
  if (candidate == tuning.end() || !candidate->is_string()) {
    return DataLossError(where + ": field 'tuning.candidate' is missing or not a string");
  }
  out.candidate = candidate->get<std::string>();
  auto threads = tuning.find("threads");
  if (threads == tuning.end() || !threads->is_number_integer() || threads->get<int>() < 1 ||
      threads->get<int>() > 256) {
    return DataLossError(where + ": field 'tuning.threads' must be an integer in [1, 256]");
  }
  out.threads = threads->get<int>();
  auto sizes = tuning.find("input_sizes");
  if (sizes == tuning.end())
    return DataLossError(where + ": field 'tuning.input_sizes' is missing");
  ASSIGN_OR_RETURN(out.input_sizes, InputSizesFromJson(*sizes, where));

  static const std::set<std::string> kCandidates = {"fp32", "bf16", "int8", "int8-fallback",
                                                    "autotuned"};
  if (!kCandidates.count(out.candidate)) {
    return DataLossError(
        fmt::format("{}: unknown candidate '{}' (this qtune knows fp32, bf16, int8, int8-fallback, "
                    "autotuned); a newer qtune may have written it",
                    where, out.candidate));
  }
  std::optional<quant::QuantPlan> plan;
  if (out.candidate != "fp32" && out.candidate != "bf16") {
    ASSIGN_OR_RETURN(std::string text, loaded.ReadFile(kPlanEntry));
    ASSIGN_OR_RETURN(plan,
                     quant::ParsePlanJson(text, fmt::format("'{}' {}", checkpoint, kPlanEntry)));
  }
  auto graph = BuildTunedGraph(model, plan.has_value() ? &*plan : nullptr);
  if (!graph.ok()) {
    return Status(graph.status().code(),
                  fmt::format("rebuilding '{}' from checkpoint '{}': {}", out.candidate, checkpoint,
                              graph.status().message()));
  }
  runtime::SessionOptions session_options;
  session_options.threads = out.threads;
  session_options.thread_policy = options.thread_policy;
  session_options.bf16 = out.candidate == "bf16";
  // BuildTunedGraph cleaned its copy: the session takes it over as it is (no second copy,
  // no second pass pipeline run).
  session_options.graph_is_clean = true;
  ASSIGN_OR_RETURN(out.session, runtime::Session::Create(std::move(*graph), session_options));
  // FailedPrecondition: sizes known only while the model runs; its stages compile during
  // the warm-up runs below (or the first Run).
  StatusOr<const runtime::Plan*> compiled = out.session->Prepare(out.input_sizes);
  if (!compiled.ok() && compiled.status().code() != StatusCode::kFailedPrecondition) {
    return compiled.status();
  }
  if (options.warmup_runs > 0) {
    ASSIGN_OR_RETURN(runtime::NamedTensors zeros,
                     ZeroInputs(out.session->graph(), out.input_sizes));
    for (int i = 0; i < options.warmup_runs; ++i) {
      ASSIGN_OR_RETURN(auto outputs, out.session->Run(zeros));
      (void)outputs;
    }
  }
  return out;
}

StatusOr<std::unique_ptr<runtime::Session>> LoadTuned(const ir::Graph& model,
                                                      const std::string& checkpoint,
                                                      const LoadTunedOptions& options) {
  ASSIGN_OR_RETURN(TunedSession tuned, LoadTunedSession(model, checkpoint, options));
  return std::move(tuned.session);
}

}  // namespace qtune::tune
