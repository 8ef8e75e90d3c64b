#include "quant/auto_settings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>
#include <vector>

#include "quant/auto_groups.h"

namespace qtune::quant {
namespace {

std::string Show(const std::vector<std::string>& list) {
  return fmt::format("{}", fmt::join(list, ","));
}
template <typename T>
std::string Show(const T& value) {
  return fmt::format("{}", value);
}

// The recipe's value, else the flag's; both and different is an error.
template <typename T>
Status Merge(const Recipe& recipe, const char* flag, const char* key,
             const std::optional<T>& from_recipe, const std::optional<T>& from_cli,
             std::optional<T>& merged) {
  if (from_recipe && from_cli && *from_recipe != *from_cli) {
    return InvalidArgumentError(
        fmt::format("{} {} contradicts recipe '{}' (auto.{}: {}); the recipe is "
                    "authoritative: drop {} or edit the recipe",
                    flag, Show(*from_cli), recipe.name, key, Show(*from_recipe), flag));
  }
  merged = from_recipe ? from_recipe : from_cli;
  return Status::Ok();
}

}  // namespace

StatusOr<std::optional<AutoSettings>> ResolveAutoSettings(const Recipe& recipe, bool cli_auto,
                                                          const AutoSettings& cli,
                                                          std::optional<Target> cli_target) {
  if (!cli_auto && !recipe.auto_search) {
    if (cli.candidate_formats || cli.score_size || cli.cost_excluded_layers || cli.effective_bits ||
        cli.latency_budget_ms || cli.cost_model) {
      return InvalidArgumentError(
          "--candidate-formats, --score-size, --cost-excluded-layers, --effective-bits, "
          "--latency-budget and --cost-model set the per-layer format search; add --auto (or "
          "an auto: block to the recipe)");
    }
    return std::optional<AutoSettings>();
  }
  if (recipe.accuracy_fallback.min_sqnr_db) {
    return InvalidArgumentError(
        fmt::format("recipe '{}' has an accuracy_fallback block, which --auto replaces (both "
                    "choose which layers stay in float): drop the block, or use auto.min_sqnr_db",
                    recipe.name));
  }
  const Target target = recipe.target.value_or(cli_target.value_or(Target::kCpu));
  if (target == Target::kOrt) {
    return InvalidArgumentError(
        "--auto chooses formats in qtune's per-layer plan; --target ort writes ONNX Runtime's "
        "quantize_static layout instead: use --target cpu or trt");
  }
  const AutoSettings r = recipe.auto_search.value_or(AutoSettings{});
  AutoSettings out;
  RETURN_IF_ERROR(Merge(recipe, "--candidate-formats", "candidate_formats", r.candidate_formats,
                        cli.candidate_formats, out.candidate_formats));
  RETURN_IF_ERROR(
      Merge(recipe, "--score-size", "score_size", r.score_size, cli.score_size, out.score_size));
  RETURN_IF_ERROR(Merge(recipe, "--cost-excluded-layers", "cost_excluded_layers",
                        r.cost_excluded_layers, cli.cost_excluded_layers,
                        out.cost_excluded_layers));
  // Objectives: one from either side; a flag naming another kind than the recipe's
  // contradicts it.
  auto kind = [](const AutoSettings& a) -> const char* {
    if (a.effective_bits) return "effective_bits";
    if (a.min_sqnr_db) return "min_sqnr_db";
    if (a.latency_budget_ms) return "latency_budget_ms";
    return nullptr;
  };
  auto flag = [](const char* key) {
    return std::string(key) == "effective_bits" ? "--effective-bits"
           : std::string(key) == "min_sqnr_db"  ? "--min-sqnr"
                                                : "--latency-budget";
  };
  for (const char* cli_kind : {"effective_bits", "min_sqnr_db", "latency_budget_ms"}) {
    const bool given = std::string(cli_kind) == "effective_bits" ? cli.effective_bits.has_value()
                       : std::string(cli_kind) == "min_sqnr_db"  ? cli.min_sqnr_db.has_value()
                                                                : cli.latency_budget_ms.has_value();
    if (given && kind(r) != nullptr && std::string(kind(r)) != cli_kind) {
      return InvalidArgumentError(fmt::format(
          "{} contradicts recipe '{}' (auto.{}): the recipe is authoritative; drop the flag or "
          "edit the recipe",
          flag(cli_kind), recipe.name, kind(r)));
    }
  }
  RETURN_IF_ERROR(Merge(recipe, "--effective-bits", "effective_bits", r.effective_bits,
                        cli.effective_bits, out.effective_bits));
  RETURN_IF_ERROR(
      Merge(recipe, "--min-sqnr", "min_sqnr_db", r.min_sqnr_db, cli.min_sqnr_db, out.min_sqnr_db));
  RETURN_IF_ERROR(Merge(recipe, "--latency-budget", "latency_budget_ms", r.latency_budget_ms,
                        cli.latency_budget_ms, out.latency_budget_ms));
  RETURN_IF_ERROR(
      Merge(recipe, "--cost-model", "cost_model", r.cost_model, cli.cost_model, out.cost_model));
  const int objectives = out.effective_bits.has_value() + out.min_sqnr_db.has_value() +
                         out.latency_budget_ms.has_value();
  if (objectives > 1) {
    return InvalidArgumentError(
        "--auto takes one objective: --effective-bits B, --min-sqnr DB or --latency-budget MS");
  }
  if (objectives == 0) {
    return InvalidArgumentError(
        "--auto needs an objective: --effective-bits B (4..32, bits per weight), --min-sqnr "
        "DB (output SQNR against fp32) or --latency-budget MS (qtune's engine)");
  }
  if (out.cost_model && *out.cost_model != "weight" && *out.cost_model != "latency") {
    return InvalidArgumentError("--cost-model '" + *out.cost_model +
                                "' is unknown; use weight or latency");
  }
  if (out.effective_bits && out.cost_model == "latency") {
    return InvalidArgumentError(
        "--effective-bits is a weight-bits budget; it does not go with --cost-model latency "
        "(use --latency-budget MS)");
  }
  if (out.latency_budget_ms && out.cost_model == "weight") {
    return InvalidArgumentError(
        "--latency-budget is a time budget; it does not go with --cost-model weight");
  }
  if (out.latency_budget_ms && !(*out.latency_budget_ms > 0)) {
    return InvalidArgumentError("--latency-budget must be a positive number of milliseconds");
  }
  if (out.effective_bits && !(*out.effective_bits >= 4 && *out.effective_bits <= 32)) {
    return InvalidArgumentError(
        fmt::format("--effective-bits {} is out of range: 4 to 32 (4.5: all nvfp4 or int4, 8: all "
                    "int8, 32: all fp32)",
                    *out.effective_bits));
  }
  if (out.min_sqnr_db && !std::isfinite(*out.min_sqnr_db)) {
    return InvalidArgumentError("--min-sqnr must be a finite number of dB");
  }
  if (out.score_size && *out.score_size < 1) {
    return InvalidArgumentError("--score-size must be at least 1");
  }
  if (!out.candidate_formats) {
    // Defaults per target: qtune's engine runs int8 and bf16; TensorRT int8 and fp8.
    out.candidate_formats = target == Target::kTrt
                                ? std::vector<std::string>{"int8", "fp8", "fp32"}
                                : std::vector<std::string>{"int8", "bf16", "fp32"};
  }
  for (const std::string& f : *out.candidate_formats) {
    if (!ParseAutoFormat(f)) {
      return InvalidArgumentError("--candidate-formats: '" + f + "' is not a format; use " +
                                  AutoFormatNameList());
    }
  }
  return std::optional<AutoSettings>(out);
}

}  // namespace qtune::quant
