// Recipe loading: turns the merged YAML (recipe_yaml.h) into a typed Recipe, checking
// every key, type and value (recipe_resolve.cc applies the loaded recipe).
#include "quant/recipe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "quant/recipe_presets.h"
#include "quant/recipe_yaml.h"

namespace qtune::quant {

using recipe_yaml::ErrorAt;
using recipe_yaml::Located;
using recipe_yaml::MergedMap;

std::optional<QuantFormat> ParseQuantFormat(const std::string& text) {
  for (const FormatInfo& f : AllFormats()) {
    if (text == f.name) return f.format;
    const std::string aliases = std::string(" ") + f.aliases + " ";
    if (!text.empty() && aliases.find(" " + text + " ") != std::string::npos) return f.format;
  }
  return std::nullopt;
}

std::optional<CalibratorKind> ParseCalibratorKind(const std::string& text) {
  for (CalibratorKind k : {CalibratorKind::kMax, CalibratorKind::kPercentile,
                           CalibratorKind::kEntropy, CalibratorKind::kMse}) {
    if (text == CalibratorName(k)) return k;
  }
  return std::nullopt;
}

std::optional<Target> ParseTarget(const std::string& text) {
  if (text == "cpu") return Target::kCpu;
  if (text == "trt") return Target::kTrt;
  if (text == "ort") return Target::kOrt;
  return std::nullopt;
}

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : EmbeddedRecipePresets()) names.emplace_back(name);
  return names;
}

std::optional<std::string> PresetText(const std::string& name) {
  for (const auto& [preset, text] : EmbeddedRecipePresets()) {
    if (preset == name) return std::string(text);
  }
  return std::nullopt;
}

namespace {

StatusOr<std::string> GetString(const Located& at) {
  if (!at.node.IsScalar()) return ErrorAt(at, "must be a string");
  return at.node.Scalar();
}

StatusOr<bool> GetBool(const Located& at) {
  bool value = false;
  if (!at.node.IsScalar() || !YAML::convert<bool>::decode(at.node, value)) {
    return ErrorAt(at, "must be true or false");
  }
  return value;
}

StatusOr<double> GetNumber(const Located& at) {
  double value = 0;
  if (!at.node.IsScalar() || !YAML::convert<double>::decode(at.node, value) ||
      !std::isfinite(value)) {
    return ErrorAt(at, "must be a finite number");
  }
  return value;
}

StatusOr<int> GetInt(const Located& at) {
  int value = 0;
  if (!at.node.IsScalar() || !YAML::convert<int>::decode(at.node, value)) {
    return ErrorAt(at, "must be an integer");
  }
  return value;
}

template <typename T>
StatusOr<T> GetEnum(const Located& at, std::optional<T> (*parse)(const std::string&),
                    const std::string& allowed) {
  if (!at.node.IsScalar()) return ErrorAt(at, "must be one of " + allowed);
  std::optional<T> value = parse(at.node.Scalar());
  if (!value) {
    return ErrorAt(at, "'" + at.node.Scalar() + "' is not valid; use one of " + allowed);
  }
  return *value;
}

Status UnknownKey(const Located& at, const std::string& key, const std::string& allowed) {
  return ErrorAt(at, "unknown key '" + key + "'; allowed here: " + allowed);
}

const char kCalibrators[] = "max, percentile, entropy, mse";

Status CheckPercentile(const Located& at, double p) {
  if (!(p > 0.0 && p <= 100.0)) return ErrorAt(at, "percentile must be in (0, 100]");
  return Status::Ok();
}

Status CheckBins(const Located& at, int bins) {
  if (bins < 16 || bins > (1 << 20)) return ErrorAt(at, "bins must be in [16, 1048576]");
  return Status::Ok();
}

// `calibrator: max` or `calibrator: {method: percentile, percentile: 99.9, bins: 2048}`.
StatusOr<CalibratorConfig> ParseCalibrator(recipe_yaml::Loader& loader, const Located& at) {
  CalibratorConfig config;
  if (at.node.IsScalar()) {
    ASSIGN_OR_RETURN(config.kind, GetEnum<CalibratorKind>(at, ParseCalibratorKind, kCalibrators));
    return config;
  }
  ASSIGN_OR_RETURN(MergedMap map, loader.MergeMap(at, {}));
  bool has_method = false;
  for (const auto& [key, value] : map) {
    if (key == "method") {
      ASSIGN_OR_RETURN(config.kind,
                       GetEnum<CalibratorKind>(value, ParseCalibratorKind, kCalibrators));
      has_method = true;
    } else if (key == "percentile") {
      ASSIGN_OR_RETURN(config.percentile, GetNumber(value));
      RETURN_IF_ERROR(CheckPercentile(value, config.percentile));
    } else if (key == "bins") {
      ASSIGN_OR_RETURN(config.bins, GetInt(value));
      RETURN_IF_ERROR(CheckBins(value, config.bins));
    } else {
      return UnknownKey(value, key, "method, percentile, bins");
    }
  }
  if (!has_method) return ErrorAt(at, "needs 'method' (" + std::string(kCalibrators) + ")");
  return config;
}

StatusOr<AxisSetting> ParseAxis(const Located& at) {
  AxisSetting axis;
  if (at.node.IsNull()) {
    axis.kind = AxisSetting::Kind::kPerTensor;
    return axis;
  }
  if (at.node.IsScalar() && at.node.Scalar() == "channel") return axis;
  int value = 0;
  if (at.node.IsScalar() && YAML::convert<int>::decode(at.node, value) && value >= -8 &&
      value < 8) {
    axis.kind = AxisSetting::Kind::kExplicit;
    axis.axis = value;
    return axis;
  }
  return ErrorAt(at, "must be 'channel', null (per tensor) or an axis number in [-8, 8)");
}

const char kRuleKeys[] =
    "name, op, enable, format, bits, axis, symmetric, calibrator, percentile, bins, "
    "block_size, algorithm, scale_type";

StatusOr<QuantizerRule> ParseRule(recipe_yaml::Loader& loader, const Located& at) {
  ASSIGN_OR_RETURN(MergedMap map, loader.MergeMap(at, {}));
  QuantizerRule rule;
  rule.origin = recipe_yaml::OriginOf(at);
  bool sets_anything = false;
  for (const auto& [key, value] : map) {
    if (key == "name") {
      ASSIGN_OR_RETURN(rule.name_glob, GetString(value));
      continue;
    }
    if (key == "op") {
      ASSIGN_OR_RETURN(rule.op_glob, GetString(value));
      continue;
    }
    sets_anything = true;
    if (key == "enable") {
      ASSIGN_OR_RETURN(rule.enable, GetBool(value));
    } else if (key == "format") {
      ASSIGN_OR_RETURN(rule.format,
                       GetEnum<QuantFormat>(value, ParseQuantFormat, FormatNameList()));
    } else if (key == "bits") {
      ASSIGN_OR_RETURN(rule.bits, GetInt(value));
      if (*rule.bits != 8 && *rule.bits != 4) {
        return ErrorAt(value, "only 8-bit and 4-bit (int4) quantizers are supported");
      }
    } else if (key == "axis") {
      ASSIGN_OR_RETURN(rule.axis, ParseAxis(value));
    } else if (key == "symmetric") {
      ASSIGN_OR_RETURN(rule.symmetric, GetBool(value));
    } else if (key == "calibrator") {
      ASSIGN_OR_RETURN(rule.calibrator,
                       GetEnum<CalibratorKind>(value, ParseCalibratorKind, kCalibrators));
    } else if (key == "percentile") {
      ASSIGN_OR_RETURN(rule.percentile, GetNumber(value));
      RETURN_IF_ERROR(CheckPercentile(value, *rule.percentile));
    } else if (key == "bins") {
      ASSIGN_OR_RETURN(rule.bins, GetInt(value));
      RETURN_IF_ERROR(CheckBins(value, *rule.bins));
    } else {
      ASSIGN_OR_RETURN(bool low_bit, ParseLowBitRuleKey(key, value, rule));
      if (!low_bit) return UnknownKey(value, key, kRuleKeys);
    }
  }
  if (!sets_anything) {
    return ErrorAt(at, "the entry sets nothing; give 'enable' or a quantizer field (" +
                           std::string(kRuleKeys) + ")");
  }
  if (rule.format == QuantFormat::kFp8E4M3 && rule.symmetric == false) {
    return ErrorAt(at, "fp8_e4m3 has no zero point; remove 'symmetric: false'");
  }
  RETURN_IF_ERROR(CheckLowBitRule(at, rule));
  return rule;
}

// `accuracy_fallback: {min_sqnr_db: 45, samples: 8, max_float_fraction: 0.75}`.
StatusOr<FallbackSettings> ParseFallback(recipe_yaml::Loader& loader, const Located& at) {
  if (!at.node.IsMap()) {
    return ErrorAt(at, "must be a mapping such as {min_sqnr_db: 45, samples: 8}");
  }
  ASSIGN_OR_RETURN(MergedMap map, loader.MergeMap(at, {}));
  FallbackSettings fallback;
  for (const auto& [key, value] : map) {
    if (key == "min_sqnr_db") {
      ASSIGN_OR_RETURN(fallback.min_sqnr_db, GetNumber(value));
    } else if (key == "samples") {
      ASSIGN_OR_RETURN(int samples, GetInt(value));
      if (samples < 1) return ErrorAt(value, "samples must be at least 1");
      fallback.samples = samples;
    } else if (key == "max_float_fraction") {
      ASSIGN_OR_RETURN(fallback.max_float_fraction, GetNumber(value));
      if (*fallback.max_float_fraction < 0.0 || *fallback.max_float_fraction > 1.0) {
        return ErrorAt(value, "max_float_fraction must be in [0, 1]");
      }
    } else {
      return UnknownKey(value, key, "min_sqnr_db, samples, max_float_fraction");
    }
  }
  if (!fallback.min_sqnr_db) return ErrorAt(at, "needs 'min_sqnr_db' (the target SQNR in dB)");
  return fallback;
}

// A list of strings: a YAML sequence or one comma-separated string.
StatusOr<std::vector<std::string>> GetStringList(const Located& at) {
  std::vector<std::string> out;
  if (at.node.IsScalar()) {
    const std::string text = at.node.Scalar();
    for (size_t begin = 0; begin <= text.size();) {
      size_t end = std::min(text.find(',', begin), text.size());
      std::string item = text.substr(begin, end - begin);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (!item.empty()) out.push_back(item);
      begin = end + 1;
    }
  } else if (at.node.IsSequence()) {
    for (size_t i = 0; i < at.node.size(); ++i) {
      Located item{at.node[i], at.file, at.node[i].Mark(), fmt::format("{}[{}]", at.path, i)};
      ASSIGN_OR_RETURN(std::string text, GetString(item));
      out.push_back(text);
    }
  } else {
    return ErrorAt(at, "must be a list of strings");
  }
  if (out.empty()) return ErrorAt(at, "must not be empty");
  return out;
}

// `auto: {candidate_formats: [int8, bf16, fp32], score_size: 8, effective_bits: 12}`.
StatusOr<AutoSettings> ParseAuto(recipe_yaml::Loader& loader, const Located& at) {
  if (!at.node.IsMap()) {
    return ErrorAt(at,
                   "must be a mapping such as {candidate_formats: [int8, fp32], "
                   "effective_bits: 12}");
  }
  ASSIGN_OR_RETURN(MergedMap map, loader.MergeMap(at, {}));
  AutoSettings settings;
  for (const auto& [key, value] : map) {
    if (key == "candidate_formats") {
      ASSIGN_OR_RETURN(settings.candidate_formats, GetStringList(value));
      for (const std::string& f : *settings.candidate_formats) {
        if (f != "int8" && f != "fp8" && f != "bf16" && f != "fp32") {
          return ErrorAt(value, "'" + f + "' is not a format; use int8, fp8, bf16, fp32");
        }
      }
    } else if (key == "score_size") {
      ASSIGN_OR_RETURN(int samples, GetInt(value));
      if (samples < 1) return ErrorAt(value, "score_size must be at least 1");
      settings.score_size = samples;
    } else if (key == "cost_excluded_layers") {
      ASSIGN_OR_RETURN(settings.cost_excluded_layers, GetStringList(value));
    } else if (key == "effective_bits") {
      ASSIGN_OR_RETURN(settings.effective_bits, GetNumber(value));
      if (*settings.effective_bits < 4 || *settings.effective_bits > 32) {
        return ErrorAt(value,
                       "effective_bits must be in [4, 32] (4.5: all nvfp4 or int4; 8: all int8; "
                       "32: all fp32)");
      }
    } else if (key == "min_sqnr_db") {
      ASSIGN_OR_RETURN(settings.min_sqnr_db, GetNumber(value));
    } else if (key == "latency_budget_ms") {
      ASSIGN_OR_RETURN(settings.latency_budget_ms, GetNumber(value));
      if (*settings.latency_budget_ms <= 0) {
        return ErrorAt(value, "latency_budget_ms must be positive");
      }
    } else if (key == "cost_model") {
      ASSIGN_OR_RETURN(settings.cost_model, GetString(value));
      if (*settings.cost_model != "weight" && *settings.cost_model != "latency") {
        return ErrorAt(value, "'" + *settings.cost_model + "' is not valid; use weight or latency");
      }
    } else {
      return UnknownKey(value, key,
                        "candidate_formats, score_size, cost_excluded_layers, effective_bits, "
                        "min_sqnr_db, latency_budget_ms, cost_model");
    }
  }
  if (settings.effective_bits.has_value() + settings.min_sqnr_db.has_value() +
          settings.latency_budget_ms.has_value() >
      1) {
    return ErrorAt(at, "give one objective: effective_bits, min_sqnr_db or latency_budget_ms");
  }
  return settings;
}

const char kTopKeys[] =
    "imports, $import, description, target, calibrator, residual_add_quantizers, "
    "accuracy_fallback, auto, quantizers";

StatusOr<Recipe> BuildRecipe(recipe_yaml::Loader& loader, const Located& root,
                             const std::string& name) {
  if (!root.node.IsMap()) {
    return ErrorAt(root,
                   "a recipe must be a YAML mapping with keys such as " + std::string(kTopKeys),
                   StatusCode::kDataLoss);
  }
  ASSIGN_OR_RETURN(MergedMap map, loader.MergeMap(root, {"imports"}));
  Recipe recipe;
  recipe.name = name;
  for (const auto& [key, value] : map) {
    if (key == "description") {
      RETURN_IF_ERROR(GetString(value).status());
    } else if (key == "target") {
      ASSIGN_OR_RETURN(recipe.target, GetEnum<Target>(value, ParseTarget, "cpu, trt, ort"));
    } else if (key == "calibrator") {
      ASSIGN_OR_RETURN(recipe.calibrator, ParseCalibrator(loader, value));
    } else if (key == "residual_add_quantizers") {
      ASSIGN_OR_RETURN(recipe.residual_add_quantizers, GetBool(value));
    } else if (key == "accuracy_fallback") {
      ASSIGN_OR_RETURN(recipe.accuracy_fallback, ParseFallback(loader, value));
    } else if (key == "auto") {
      ASSIGN_OR_RETURN(recipe.auto_search, ParseAuto(loader, value));
    } else if (key == "quantizers") {
      ASSIGN_OR_RETURN(std::vector<Located> items, loader.SpliceList(value));
      for (const Located& item : items) {
        ASSIGN_OR_RETURN(QuantizerRule rule, ParseRule(loader, item));
        recipe.quantizers.push_back(std::move(rule));
      }
    } else {
      return UnknownKey(value, key, kTopKeys);
    }
  }
  return recipe;
}

}  // namespace

StatusOr<Recipe> LoadRecipe(const std::string& preset_or_path) {
  try {
    recipe_yaml::Loader loader;
    ASSIGN_OR_RETURN(Located root, loader.LoadRoot(preset_or_path));
    return BuildRecipe(loader, root, preset_or_path);
  } catch (const YAML::Exception& e) {  // yaml-cpp never should; keep it off our callers
    return DataLossError("recipe '" + preset_or_path + "': " + e.what());
  }
}

StatusOr<Recipe> ParseRecipe(const std::string& yaml_text, const std::string& source_name) {
  try {
    recipe_yaml::Loader loader;
    ASSIGN_OR_RETURN(Located root, loader.ParseRoot(yaml_text, source_name));
    return BuildRecipe(loader, root, source_name);
  } catch (const YAML::Exception& e) {
    return DataLossError("recipe '" + source_name + "': " + e.what());
  }
}

}  // namespace qtune::quant
