// Quantization recipes: which quantizers placement may create, and how each quantizes.
// The YAML schema is documented in docs/formats/recipe.md. Summary:
//
//   imports: {alias: int8 | fp8 | int8_residual | fp8_residual | path/to/file.yaml}
//   $import: alias                # dict merge: the imported recipe, then the inline keys
//   target: cpu | trt | ort       # optional; --target must agree
//   calibrator: max | percentile | entropy | mse   (or {method, percentile, bins})
//   residual_add_quantizers: false
//   accuracy_fallback:            # optional; --min-sqnr etc. must agree
//     min_sqnr_db: 45             # required in the block
//     samples: 8
//     max_float_fraction: 0.75
//   auto: {...}                   # optional; quantize --auto settings (AutoSettings)
//   quantizers:                   # ordered; every matching entry applies, later ones win
//     - $import: alias            # lone $import in the list: splices the alias's list
//     - name: "*weight_quantizer" # glob on the quantizer name (default "*")
//       op: "Conv*"               # glob on the op type of the node that owns it (default "*")
//       format: int8 | fp8_e4m3 | int4   (FormatNameList(); int4 is weight-only)
//       bits: 8                     # the format's bits (4 for int4)
//       block_size: 64              # weights: blockwise scales along the reduction axis
//       algorithm: rtn | clip | awq # weights: how scales are chosen (quant_types.h)
//       scale_type: fp32 | fp16     # weights: type of the exported scales
//       axis: channel | null | <int>
//       symmetric: true
//       calibrator: max | percentile | entropy | mse
//       percentile: 99.99
//       enable: false
//
// Loading never throws and never crashes on bad input. Errors have the form
// "FILE:LINE:COL: key 'quantizers[2].format': <what is wrong>; <what to do>", and their
// code says whose fault it is (qtune quantize maps it to exit 2 or 3, docs/cli.md):
//   InvalidArgument  the file is a YAML recipe that asks for something invalid: an unknown
//                    key, a wrong type, an unknown format/algorithm/scale_type, a bad
//                    block_size or value, contradicting fields, an unknown alias, a cycle;
//   NotFound         the recipe, or a file it imports, is neither a preset nor readable;
//   DataLoss         the file is not a YAML recipe: a syntax error, empty, a top level that
//                    is not a mapping, more than two documents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "quant/quant_types.h"

namespace qtune::quant {

// How a rule sets QuantizerConfig::axis.
struct AxisSetting {
  enum class Kind {
    kChannel,    // the op's output-channel axis for weights (Conv 0, ConvTranspose 1,
                 // Gemm/MatMul the output-feature axis); per-tensor for activations
    kPerTensor,  // axis: null
    kExplicit,   // axis: <int>
  };
  Kind kind = Kind::kChannel;
  int axis = 0;  // kExplicit only
};

// One `quantizers:` entry. Unset fields leave the quantizer's config as it was.
struct QuantizerRule {
  std::string name_glob = "*";  // fnmatch(3) glob on "<node>/<kind>_quantizer"
  std::string op_glob = "*";    // fnmatch(3) glob on the owning node's op type
  // false: the quantizer is removed. true or unset with any field: it is (re)enabled.
  std::optional<bool> enable;
  std::optional<QuantFormat> format;
  std::optional<int> bits;
  std::optional<AxisSetting> axis;
  std::optional<bool> symmetric;
  std::optional<CalibratorKind> calibrator;
  std::optional<double> percentile;
  std::optional<int> bins;
  std::optional<int> block_size;  // 0 = per channel
  std::optional<WeightAlgorithm> algorithm;
  std::optional<ScaleType> scale_type;
  std::string origin;  // "FILE:LINE" of the entry, for messages and the summary
};

// The low-bit keys of a `quantizers:` entry (recipe_lowbit.cc): block_size, algorithm,
// scale_type. Sets `rule` and returns true when `key` is one of them.
namespace recipe_yaml {
struct Located;
}
StatusOr<bool> ParseLowBitRuleKey(const std::string& key, const recipe_yaml::Located& value,
                                  QuantizerRule& rule);
// Cross-field checks of one entry: bits against the format, block sizes, zero points.
Status CheckLowBitRule(const recipe_yaml::Located& at, const QuantizerRule& rule);

// The accuracy fallback's settings (accuracy_fallback.h) as a recipe's
// `accuracy_fallback:` block or the command line (--min-sqnr, --fallback-samples,
// --max-float-fraction) gives them. Unset = not given; the fallback runs when
// min_sqnr_db is set, with FallbackOptions' defaults for the others.
struct FallbackSettings {
  std::optional<double> min_sqnr_db;
  std::optional<int64_t> samples;
  std::optional<double> max_float_fraction;
};

// The `auto:` block: settings of `qtune quantize --auto` (auto_quantize.h), as the recipe
// or the command line gives them. Unset = not given. Authoritative like the rest of the
// recipe: a flag with another value is an error (ResolveAutoSettings, auto_settings.h).
//   auto:
//     candidate_formats: [int8, fp8, bf16, fp32]   # or "int8,bf16,fp32"
//     score_size: 8                 # calibration samples scored
//     cost_excluded_layers: ["head*"]  # node-name globs left out of the budget
//     effective_bits: 12            # one objective: effective_bits, min_sqnr_db or
//     min_sqnr_db: 40               #   latency_budget_ms
//     latency_budget_ms: 30
//     cost_model: weight            # weight | latency: what min_sqnr_db minimizes
struct AutoSettings {
  std::optional<std::vector<std::string>> candidate_formats;  // int8, fp8, bf16, fp32
  std::optional<int64_t> score_size;
  std::optional<std::vector<std::string>> cost_excluded_layers;
  std::optional<double> effective_bits;
  std::optional<double> min_sqnr_db;
  std::optional<double> latency_budget_ms;
  std::optional<std::string> cost_model;  // "weight" or "latency"
};

struct Recipe {
  std::string name;              // preset name or file path it was loaded from
  std::optional<Target> target;  // set only when the recipe names one
  // The default calibrator of every activation quantizer; set when the recipe names one.
  std::optional<CalibratorConfig> calibrator;
  bool residual_add_quantizers = false;
  FallbackSettings accuracy_fallback;
  std::optional<AutoSettings> auto_search;  // set when the recipe has an `auto:` block
  std::vector<QuantizerRule> quantizers;    // in application order
};

// True when a rule asks for a weight-only format, block scales or a clip/AWQ search
// (quantize then plans --target ort with qtune's placement, to write MatMulNBits).
bool RecipeHasLowBitRules(const Recipe& recipe);

// Names of the built-in presets, embedded in the library (recipes/*.yaml).
std::vector<std::string> PresetNames();
// The YAML text of a built-in preset, or nullopt.
std::optional<std::string> PresetText(const std::string& name);

// A preset name ("int8", "fp8", "int8_residual", "fp8_residual") or a path to a YAML file.
StatusOr<Recipe> LoadRecipe(const std::string& preset_or_path);
// Parses YAML text; `source_name` names it in errors and is the base for relative imports
// (its directory; "" = current directory).
StatusOr<Recipe> ParseRecipe(const std::string& yaml_text, const std::string& source_name);

// The command line's settings that a recipe may also fix. Unset = not given.
struct CliOverrides {
  std::optional<Target> target;
  std::optional<CalibratorKind> calibrator;
  FallbackSettings fallback;
};

// The settings quantization runs with once the recipe and the command line agree.
struct EffectiveSettings {
  Target target = Target::kCpu;
  CalibratorConfig calibrator;
  FallbackSettings fallback;  // min_sqnr_db unset: no accuracy fallback
};

// --recipe is authoritative: a CLI value that contradicts the recipe's target,
// calibrator or an accuracy_fallback field is an InvalidArgument error naming both; a CLI
// value the recipe leaves open is taken; otherwise the recipe's value (or the default:
// cpu, max calibration, no fallback). Fallback samples or fraction without a min_sqnr_db
// from either side is an InvalidArgument error too.
StatusOr<EffectiveSettings> ResolveCliOverrides(const Recipe& recipe,
                                                const CliOverrides& overrides);

// ResolveCliOverrides, then writes the result into `recipe` (target and default
// calibrator), so PlanQuantization gives every activation quantizer the calibrator the
// command line chose when the recipe left it open. Per-quantizer `calibrator:` rules still
// win. Call this before PlanQuantization.
StatusOr<EffectiveSettings> ApplyCliOverrides(Recipe& recipe, const CliOverrides& overrides);

// The config one quantizer ends up with after every matching rule applied in order,
// starting from `initial` (enabled). nullopt when a rule disabled it. `default_axis` is
// the axis AxisSetting::kChannel stands for (nullopt for activations).
struct ResolvedQuantizer {
  QuantizerConfig config;
  std::string origin;  // the last rule that changed it ("" = defaults)
  // The block size came from a rule whose name has no glob characters (it names this
  // quantizer): a layer the block does not fit is an error, not a skipped layer.
  bool block_size_forced = false;
};
std::optional<ResolvedQuantizer> ResolveQuantizer(const Recipe& recipe,
                                                  const std::string& quantizer_name,
                                                  const std::string& op_type,
                                                  std::optional<int> default_axis);

// Parsing helpers shared with the CLI.
std::optional<QuantFormat> ParseQuantFormat(const std::string& text);
std::optional<CalibratorKind> ParseCalibratorKind(const std::string& text);
std::optional<Target> ParseTarget(const std::string& text);

}  // namespace qtune::quant
