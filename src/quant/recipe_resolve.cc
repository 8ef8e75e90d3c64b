// What a recipe resolves to (recipe.h): the settings once the command line agrees with the
// recipe (--recipe is authoritative), and the config of one quantizer after every rule that
// matches it.
#include <fmt/format.h>
#include <fnmatch.h>

#include <cmath>
#include <string>

#include "quant/recipe.h"

namespace qtune::quant {

namespace {

// One accuracy_fallback field: the recipe's, else the command line's; both and different
// is an error.
template <typename T>
Status MergeFallbackField(const Recipe& recipe, const char* flag, const char* key,
                          const std::optional<T>& from_recipe, const std::optional<T>& from_cli,
                          std::optional<T>& merged) {
  if (from_recipe && from_cli && *from_recipe != *from_cli) {
    return InvalidArgumentError(
        fmt::format("{} {} contradicts recipe '{}' (accuracy_fallback.{}: {}); the recipe is "
                    "authoritative: drop {} or edit the recipe",
                    flag, *from_cli, recipe.name, key, *from_recipe, flag));
  }
  merged = from_recipe ? from_recipe : from_cli;
  return Status::Ok();
}

StatusOr<FallbackSettings> ResolveFallback(const Recipe& recipe, const FallbackSettings& cli) {
  const FallbackSettings& r = recipe.accuracy_fallback;
  FallbackSettings out;
  RETURN_IF_ERROR(MergeFallbackField(recipe, "--min-sqnr", "min_sqnr_db", r.min_sqnr_db,
                                     cli.min_sqnr_db, out.min_sqnr_db));
  RETURN_IF_ERROR(MergeFallbackField(recipe, "--fallback-samples", "samples", r.samples,
                                     cli.samples, out.samples));
  RETURN_IF_ERROR(MergeFallbackField(recipe, "--max-float-fraction", "max_float_fraction",
                                     r.max_float_fraction, cli.max_float_fraction,
                                     out.max_float_fraction));
  if (out.min_sqnr_db && !std::isfinite(*out.min_sqnr_db)) {
    return InvalidArgumentError("--min-sqnr must be a finite number of dB");
  }
  if (!out.min_sqnr_db && (out.samples || out.max_float_fraction)) {
    return InvalidArgumentError(
        "--fallback-samples and --max-float-fraction tune the accuracy fallback, which needs "
        "--min-sqnr (or accuracy_fallback.min_sqnr_db in the recipe)");
  }
  return out;
}

}  // namespace

StatusOr<EffectiveSettings> ResolveCliOverrides(const Recipe& recipe,
                                                const CliOverrides& overrides) {
  EffectiveSettings settings;
  if (recipe.target && overrides.target && *recipe.target != *overrides.target) {
    return InvalidArgumentError(std::string("--target ") + TargetName(*overrides.target) +
                                " contradicts recipe '" + recipe.name +
                                "' (target: " + TargetName(*recipe.target) +
                                "); the recipe is authoritative: drop --target or edit the "
                                "recipe");
  }
  settings.target = recipe.target ? *recipe.target : overrides.target.value_or(Target::kCpu);
  if (recipe.calibrator && overrides.calibrator &&
      recipe.calibrator->kind != *overrides.calibrator) {
    return InvalidArgumentError(
        std::string("--calibrator ") + CalibratorName(*overrides.calibrator) +
        " contradicts recipe '" + recipe.name +
        "' (calibrator: " + CalibratorName(recipe.calibrator->kind) +
        "); the recipe is authoritative: drop --calibrator or edit the recipe");
  }
  if (recipe.calibrator) {
    settings.calibrator = *recipe.calibrator;
  } else if (overrides.calibrator) {
    settings.calibrator.kind = *overrides.calibrator;
  }
  ASSIGN_OR_RETURN(settings.fallback, ResolveFallback(recipe, overrides.fallback));
  return settings;
}

StatusOr<EffectiveSettings> ApplyCliOverrides(Recipe& recipe, const CliOverrides& overrides) {
  ASSIGN_OR_RETURN(EffectiveSettings settings, ResolveCliOverrides(recipe, overrides));
  recipe.target = settings.target;
  recipe.calibrator = settings.calibrator;
  return settings;
}

std::optional<ResolvedQuantizer> ResolveQuantizer(const Recipe& recipe,
                                                  const std::string& quantizer_name,
                                                  const std::string& op_type,
                                                  std::optional<int> default_axis) {
  ResolvedQuantizer out;
  out.config.axis = default_axis;
  if (recipe.calibrator) out.config.calibrator = *recipe.calibrator;
  for (const QuantizerRule& rule : recipe.quantizers) {
    if (fnmatch(rule.name_glob.c_str(), quantizer_name.c_str(), 0) != 0) continue;
    if (fnmatch(rule.op_glob.c_str(), op_type.c_str(), 0) != 0) continue;
    out.origin = rule.origin;
    if (rule.enable == false) {
      out.config.enable = false;
      continue;
    }
    out.config.enable = true;
    if (rule.format) out.config.format = *rule.format;
    if (rule.bits) out.config.bits = *rule.bits;
    if (rule.symmetric) out.config.symmetric = *rule.symmetric;
    if (rule.calibrator) out.config.calibrator.kind = *rule.calibrator;
    if (rule.percentile) out.config.calibrator.percentile = *rule.percentile;
    if (rule.bins) out.config.calibrator.bins = *rule.bins;
    if (rule.format && !rule.bits) out.config.bits = FormatInfoOf(*rule.format).bits;
    if (rule.algorithm) out.config.algorithm = *rule.algorithm;
    if (rule.scale_type) out.config.scale_type = *rule.scale_type;
    if (rule.block_size) {
      out.config.block_size = *rule.block_size;
      out.block_size_forced = rule.name_glob.find_first_of("*?[") == std::string::npos;
    }
    if (rule.axis) {
      switch (rule.axis->kind) {
        case AxisSetting::Kind::kChannel:
          out.config.axis = default_axis;
          break;
        case AxisSetting::Kind::kPerTensor:
          out.config.axis.reset();
          break;
        case AxisSetting::Kind::kExplicit:
          out.config.axis = rule.axis->axis;
          break;
      }
    }
  }
  if (!out.config.enable) return std::nullopt;
  return out;
}

}  // namespace qtune::quant
