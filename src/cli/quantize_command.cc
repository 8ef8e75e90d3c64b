// qtune quantize MODEL -o OUT.onnx --calib DATA... [--preprocess SPEC] [--recipe R]
//   [--target cpu|trt|ort] [--calibrator max|percentile|entropy|mse] [--percentile P] [--report]
//   [--json] [--random-calibration [--seed S]] [--asymmetric-activations] [--exclude GLOB]
//   [--exclude-op OP] [--fp16-scales] [--float-weights] [--threads N]
//   [--min-sqnr DB [--fallback-samples N] [--max-float-fraction F]]
//   [--auto (--effective-bits B | --min-sqnr DB | --latency-budget MS) [--cost-model M]
//    [--candidate-formats F,F] [--score-size N] [--cost-excluded-layers GLOB,GLOB]]
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/global_flags.h"
#include "cli/output_paths.h"
#include "core/json_limits.h"
#include "ir/onnx_io.h"
#include "quant/auto_report.h"
#include "quant/auto_settings.h"
#include "quant/lowbit_checks.h"
#include "quant/quantize_model.h"
#include "quant/recipe.h"

namespace qtune::cli {
namespace {

struct QuantizeCliOptions {
  std::string model_path;
  std::string output_path;
  std::vector<std::string> calib;
  std::string preprocess;
  std::string recipe = "int8";
  std::string target;
  std::string calibrator;
  double percentile = 0.0;
  bool report_only = false;
  bool json = false;
  bool random_calibration = false;
  bool fp16_scales = false;
  bool float_weights = false;
  bool asymmetric_activations = false;
  std::vector<std::string> exclude;     // node-name globs kept in float
  std::vector<std::string> exclude_op;  // op-type globs kept in float
  uint64_t seed = 0;                    // --random-calibration's samples
  CLI::Option* seed_option = nullptr;
  int threads = OfflineThreadsDefault();
  int64_t calib_samples = 0;
  int64_t batch = 0;  // 0: from calib_memory_mb
  int64_t calib_memory_mb = 1024;
  CLI::Option* percentile_option = nullptr;
  // Accuracy fallback; each unset when its flag is not given.
  std::optional<double> min_sqnr;
  std::optional<int64_t> fallback_samples;
  std::optional<double> max_float_fraction;
  // Per-layer format search (--auto); --min-sqnr is its objective when --auto is on.
  bool auto_mode = false;
  std::optional<double> effective_bits;
  std::optional<double> latency_budget_ms;
  std::optional<std::string> cost_model;
  std::optional<std::string> candidate_formats;  // comma-separated
  std::optional<int64_t> score_size;
  std::vector<std::string> cost_excluded_layers;  // globs, comma-separated or repeated
};

// The --auto flags as AutoSettings; `auto_on`: --auto or the recipe's auto: block, which
// makes --min-sqnr the search's objective instead of the accuracy fallback's target.
quant::AutoSettings AutoFlags(const QuantizeCliOptions& cli, bool auto_on) {
  quant::AutoSettings s;
  auto split = [](const std::string& text) {
    std::vector<std::string> out;
    for (size_t begin = 0; begin <= text.size();) {
      size_t end = std::min(text.find(',', begin), text.size());
      if (end > begin) out.push_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
    return out;
  };
  if (cli.candidate_formats) s.candidate_formats = split(*cli.candidate_formats);
  s.score_size = cli.score_size;
  if (!cli.cost_excluded_layers.empty()) {
    std::vector<std::string> globs;
    for (const std::string& g : cli.cost_excluded_layers) {
      for (std::string& one : split(g)) globs.push_back(std::move(one));
    }
    s.cost_excluded_layers = globs;
  }
  s.effective_bits = cli.effective_bits;
  s.latency_budget_ms = cli.latency_budget_ms;
  s.cost_model = cli.cost_model;
  if (auto_on) s.min_sqnr_db = cli.min_sqnr;
  return s;
}

constexpr char kRandomWarning[] =
    "qtune: WARNING: --random-calibration: the scales come from uniform random data, not from "
    "your data. They are MEANINGLESS and the quantized model's accuracy will be poor. Use this "
    "only to try the pipeline; pass --calib with real samples for a model you deploy.\n";

// The rules the flags add after the recipe's: --asymmetric-activations (the same rules as
// recipes/int8_asym.yaml), then every --exclude and --exclude-op (a disabled quantizer wins).
std::vector<quant::QuantizerRule> ExtraRules(const QuantizeCliOptions& cli) {
  std::vector<quant::QuantizerRule> rules;
  if (cli.asymmetric_activations) {
    for (const char* glob : {"*input*_quantizer", "*shortcut*_quantizer"}) {
      quant::QuantizerRule rule;
      rule.name_glob = glob;
      rule.symmetric = false;
      rule.origin = "--asymmetric-activations";
      rules.push_back(rule);
    }
  }
  for (const std::string& glob : cli.exclude) {
    quant::QuantizerRule rule;
    rule.name_glob = glob + "/*";  // every quantizer of the matching nodes
    rule.enable = false;
    rule.origin = "--exclude '" + glob + "'";
    rules.push_back(rule);
  }
  for (const std::string& glob : cli.exclude_op) {
    quant::QuantizerRule rule;
    rule.op_glob = glob;
    rule.enable = false;
    rule.origin = "--exclude-op '" + glob + "'";
    rules.push_back(rule);
  }
  return rules;
}

// The recipe's first fp8_e4m3 quantizer rule, or nullptr: flags that need a zero point or
// the int8 grid do not fit it.
const quant::QuantizerRule* FirstFp8Rule(const quant::Recipe& recipe) {
  for (const quant::QuantizerRule& rule : recipe.quantizers) {
    if (rule.format == quant::QuantFormat::kFp8E4M3) return &rule;
  }
  return nullptr;
}

// Flag combinations the recipe makes impossible are usage errors, found before any work:
// --percentile without the percentile calibrator, the entropy calibrator on FP8 quantizers.
int CheckFlagsFitRecipe(const QuantizeCliOptions& cli, const quant::Recipe& recipe,
                        const quant::EffectiveSettings& settings) {
  const bool percentile_given = cli.percentile_option != nullptr && cli.percentile_option->count();
  if (percentile_given && settings.calibrator.kind != quant::CalibratorKind::kPercentile) {
    std::fprintf(stderr,
                 "qtune: error: --percentile needs the percentile calibrator, but the calibrator "
                 "is '%s' (add --calibrator percentile)\n",
                 quant::CalibratorName(settings.calibrator.kind));
    return kExitUsage;
  }
  if (cli.seed_option != nullptr && cli.seed_option->count() > 0 && !cli.random_calibration) {
    std::fprintf(stderr,
                 "qtune: error: --seed sets the random calibration data's seed; it "
                 "needs --random-calibration\n");
    return kExitUsage;
  }
  if (cli.asymmetric_activations) {
    if (settings.target == quant::Target::kTrt) {
      std::fprintf(stderr,
                   "qtune: error: --asymmetric-activations does not fit --target trt: "
                   "TensorRT quantizes symmetrically only (use --target cpu or ort)\n");
      return kExitUsage;
    }
    if (const quant::QuantizerRule* fp8 = FirstFp8Rule(recipe)) {
      std::fprintf(stderr,
                   "qtune: error: --asymmetric-activations: recipe '%s' quantizes to fp8_e4m3 "
                   "(%s), which has no zero point; use an int8 recipe\n",
                   cli.recipe.c_str(), fp8->origin.c_str());
      return kExitUsage;
    }
  }
  if (cli.calibrator == "entropy") {
    if (const quant::QuantizerRule* fp8 = FirstFp8Rule(recipe)) {
      std::fprintf(stderr,
                   "qtune: error: --calibrator entropy models the int8 grid, but recipe '%s' "
                   "quantizes to fp8_e4m3 (%s); use --calibrator mse or max with FP8\n",
                   cli.recipe.c_str(), fp8->origin.c_str());
      return kExitUsage;
    }
  }
  return kExitOk;
}

// A model that already holds Q/DQ pairs or quantized ops (an int4, NVFP4 or MXFP8 export,
// ONNX Runtime's MatMulNBits) was quantized before; quantizing it again would find no
// float weights to quantize. (QuantizeModel refuses it too; this says it with the path.)
int CheckNotQuantized(const ir::Graph& graph, const std::string& path) {
  const std::string found = quant::QuantizedOpsIn(graph);
  if (found.empty()) return kExitOk;
  std::fprintf(stderr,
               "qtune: error: %s is already quantized (%s); quantize the float model it "
               "came from, or check it with `qtune eval FLOAT.onnx %s`\n",
               path.c_str(), found.c_str(), path.c_str());
  return kExitBadInput;
}

int Quantize(const QuantizeCliOptions& cli) {
  if (!cli.report_only && cli.output_path.empty()) {
    std::fprintf(stderr, "qtune: error: quantize needs -o OUT.onnx (or --report)\n");
    return kExitUsage;
  }
  if (cli.calib.empty() && !cli.random_calibration) {
    std::fprintf(stderr,
                 "qtune: error: quantize needs calibration data: --calib FILE.npy|FILE.npz|DIR "
                 "(a few hundred real samples), or --random-calibration to try the pipeline "
                 "with meaningless scales\n");
    return kExitUsage;
  }
  if (!cli.calib.empty() && cli.random_calibration) {
    std::fprintf(stderr, "qtune: error: --random-calibration and --calib exclude each other\n");
    return kExitUsage;
  }
  if (!cli.report_only) {
    std::vector<std::string> inputs = {cli.model_path, cli.recipe};
    for (const std::string& c : cli.calib) inputs.push_back(InputArgPath(c));
    if (int code = CheckOutputIsNotAnInput("-o", cli.output_path, inputs); code != kExitOk) {
      return code;
    }
    // Before calibration, which can take minutes.
    if (int code = CheckOutputWritable("-o", cli.output_path); code != kExitOk) return code;
  }
  quant::QuantizeModelOptions options;
  options.recipe = cli.recipe;
  if (!cli.target.empty()) options.target = quant::ParseTarget(cli.target);
  if (!cli.calibrator.empty()) options.calibrator = quant::ParseCalibratorKind(cli.calibrator);
  if (cli.percentile_option != nullptr && cli.percentile_option->count() > 0) {
    options.percentile = cli.percentile;
  }
  // The recipe against the flags first: a contradiction is a usage error.
  auto recipe = quant::LoadRecipe(cli.recipe);
  if (!recipe.ok()) return ReportRecipeError(recipe.status());
  const bool auto_on = cli.auto_mode || recipe->auto_search.has_value();
  options.auto_mode = cli.auto_mode;
  options.auto_settings = AutoFlags(cli, auto_on);
  options.fallback = {auto_on ? std::nullopt : cli.min_sqnr, cli.fallback_samples,
                      cli.max_float_fraction};
  auto settings =
      quant::ResolveCliOverrides(*recipe, {options.target, options.calibrator, options.fallback});
  if (!settings.ok()) {
    ReportAndExitCode(settings.status());
    return kExitUsage;
  }
  if (int code = CheckFlagsFitRecipe(cli, *recipe, *settings); code != kExitOk) return code;
  if (auto auto_settings = quant::ResolveAutoSettings(*recipe, options.auto_mode,
                                                      options.auto_settings, settings->target);
      !auto_settings.ok()) {
    ReportAndExitCode(auto_settings.status());
    return kExitUsage;
  }
  options.calib_specs = cli.calib;
  options.preprocess = cli.preprocess;
  options.random_calibration = cli.random_calibration;
  options.random_seed = cli.seed;
  options.extra_rules = ExtraRules(cli);
  options.max_calib_samples = cli.calib_samples;
  options.calib_batch = cli.batch;
  options.calib_memory_bytes = cli.calib_memory_mb << 20;
  options.threads = cli.threads;
  options.show_progress = !cli.json;
  options.export_model = !cli.report_only;
  options.export_options.fp16_scales = cli.fp16_scales;
  options.export_options.float_weights = cli.float_weights;
  if (cli.random_calibration) std::fputs(kRandomWarning, stderr);

  auto graph = ir::LoadModel(cli.model_path);
  if (!graph.ok()) return ReportAndExitCode(graph.status());
  if (int code = CheckNotQuantized(**graph, cli.model_path); code != kExitOk) return code;
  {
    quant::Recipe with_flags = *recipe;
    with_flags.quantizers.insert(with_flags.quantizers.end(), options.extra_rules.begin(),
                                 options.extra_rules.end());
    Status low_bit = quant::CheckLowBitRecipe(**graph, with_flags, settings->target);
    if (!low_bit.ok()) return ReportUsageError(low_bit);
  }
  auto result = quant::QuantizeModel(**graph, options);
  if (!result.ok()) return ReportAndExitCode(result.status());
  if (!cli.report_only) {
    Status saved = ir::SaveModel(*result->quantized, cli.output_path);
    if (!saved.ok()) return ReportAndExitCode(saved);
  }
  if (cli.json) {
    nlohmann::json j = quant::SummaryToJson(result->summary);
    j["model"] = cli.model_path;
    j["output"] = cli.report_only ? nlohmann::json() : nlohmann::json(cli.output_path);
    j["recipe"] = cli.recipe;
    j["calibration"] = result->calibration_source;
    j["random_calibration"] = cli.random_calibration;
    if (result->auto_report) j["auto"] = quant::AutoReportToJson(*result->auto_report);
    std::printf("%s\n", DumpJson(j, 2).c_str());
  } else {
    std::printf("%s", quant::SummaryToText(result->summary).c_str());
    if (result->auto_report) {
      std::printf("%s", quant::AutoReportToText(*result->auto_report).c_str());
    }
    std::printf("calibration: %s%s\n", result->calibration_source.c_str(),
                cli.random_calibration ? " (RANDOM: scales are meaningless)" : "");
    if (!cli.report_only) std::printf("wrote %s\n", cli.output_path.c_str());
  }
  if (cli.random_calibration) std::fputs(kRandomWarning, stderr);
  if (result->fallback.has_value() && !result->fallback->non_finite_output.empty()) {
    std::fprintf(stderr,
                 "qtune: warning: the quantized model's '%s' is NaN or inf on the calibration "
                 "samples (scored -inf dB SQNR)\n",
                 result->fallback->non_finite_output.c_str());
  }
  if (result->auto_report && !result->auto_report->reached) {
    const quant::AutoReport& a = *result->auto_report;
    std::fprintf(stderr,
                 "qtune: error: --auto did not reach its objective (%s %g): measured %.1f dB "
                 "at %.2f effective bits; %s. Lower the target, raise the budget or add "
                 "candidate formats.\n",
                 a.objective.c_str(), a.target, a.measured_db, a.effective_bits,
                 cli.report_only ? "nothing was written" : "the closest choice was written");
    return kExitFailure;
  }
  if (result->fallback.has_value() && !result->fallback->reached) {
    std::fprintf(stderr,
                 "qtune: error: the accuracy fallback did not reach %.1f dB (best %.1f dB with %zu "
                 "layers in float); %s. Lower the target, allow more layers in float "
                 "(--max-float-fraction) or try another recipe or calibrator.\n",
                 result->fallback->target_db, result->fallback->sqnr_after_db,
                 result->fallback->fallen_back.size(),
                 cli.report_only ? "nothing was written"
                                 : "the model with the best SQNR measured was written");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void AddQuantizeCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<QuantizeCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "quantize", "Post-training quantization: calibrate, place Q/DQ and write a QDQ ONNX model");
  cmd->add_option("model", o->model_path, "Float ONNX model")->required();
  cmd->add_option("-o,--output", o->output_path, "Write the QDQ model here");
  cmd->add_option("--calib", o->calib,
                  "Calibration data: NAME=FILE.npy (per input), FILE.npy, FILE.npz or an image "
                  "folder");
  cmd->add_option("--preprocess", o->preprocess,
                  "Image preprocessing for an image folder (docs/calibration.md)");
  cmd->add_option("--recipe", o->recipe,
                  "int8 | fp8 | int8_residual | fp8_residual | int8_asym | FILE.yaml")
      ->capture_default_str();
  cmd->add_option("--target", o->target,
                  "cpu (qtune's engine) | trt (TensorRT) | ort (ONNX Runtime: quantize_static's "
                  "layout, uint8 activations) (default: the recipe's, else cpu)")
      ->check(CLI::IsMember({"cpu", "trt", "ort"}));
  cmd->add_option("--calibrator", o->calibrator, "max | percentile | entropy | mse")
      ->check(CLI::IsMember({"max", "percentile", "entropy", "mse"}));
  o->percentile_option =
      cmd->add_option("--percentile", o->percentile, "Percentile of |x| (percentile calibrator)")
          ->check(CLI::Range(50.0, 100.0));
  cmd->add_option("--calib-samples", o->calib_samples, "Use at most this many samples (0: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--batch", o->batch,
                  "Calibration batch size (default: what fits --calib-memory, at most 32)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--calib-memory", o->calib_memory_mb,
                  "MiB one calibration batch may use when --batch is not given")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_flag("--report", o->report_only, "Show the per-layer table without writing a model");
  cmd->add_flag("--json", o->json, "Print the table as JSON (docs/formats/summary.md)");
  cmd->add_flag("--random-calibration", o->random_calibration,
                "Calibrate on random data (meaningless scales; for trying the pipeline)");
  o->seed_option =
      cmd->add_option("--seed", o->seed, "Seed of the --random-calibration samples (default 0)");
  cmd->add_flag("--asymmetric-activations", o->asymmetric_activations,
                "Activations as asymmetric uint8 (int8 recipes, not --target trt; as --recipe "
                "int8_asym)");
  cmd->add_option("--exclude", o->exclude,
                  "Keep the nodes whose name matches this glob in float (repeatable)");
  cmd->add_option("--exclude-op", o->exclude_op,
                  "Keep every node of this op type (glob) in float (repeatable)");
  cmd->add_flag("--fp16-scales", o->fp16_scales, "Write float16 scales (opset 19)");
  cmd->add_flag("--float-weights", o->float_weights,
                "Keep weights in float behind Q/DQ instead of storing them quantized");
  cmd->add_option("--min-sqnr", o->min_sqnr,
                  "Accuracy fallback: keep the most sensitive layers in float until the "
                  "outputs reach this SQNR (dB) against fp32 on calibration samples (with "
                  "--auto: the format search's objective)");
  cmd->add_option("--fallback-samples", o->fallback_samples,
                  "Calibration samples the accuracy fallback measures (default 8)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--max-float-fraction", o->max_float_fraction,
                  "Accuracy fallback: most layers kept in float, as a fraction of the quantized "
                  "(default 0.75)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--auto", o->auto_mode,
                "Per-layer format search: choose int4/nvfp4/int8/fp8/mxfp8/bf16/fp32 per layer for "
                "--effective-bits B or --min-sqnr DB (docs/quantize.md, Auto mode)");
  cmd->add_option("--effective-bits", o->effective_bits,
                  "--auto budget: bits per weight element, 4 to 32 (4.5 all nvfp4 or int4, 8 "
                  "all int8, 32 all fp32)")
      ->check(CLI::Range(4.0, 32.0));
  cmd->add_option("--latency-budget", o->latency_budget_ms,
                  "--auto budget: milliseconds per run in qtune's engine on one thread, each "
                  "layer's time measured per format")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cost-model", o->cost_model,
                  "--auto: what --min-sqnr minimizes: weight (bits x weights, default) or "
                  "latency (measured in qtune's engine)")
      ->check(CLI::IsMember({"weight", "latency"}));
  cmd->add_option("--candidate-formats", o->candidate_formats,
                  "--auto: formats to choose from: int4, nvfp4, int8, fp8, mxfp8, bf16, fp32 "
                  "(default cpu: int8,bf16,fp32; trt: int8,fp8,fp32)");
  cmd->add_option("--score-size", o->score_size,
                  "--auto: calibration samples each candidate is scored on (default 8)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--cost-excluded-layers", o->cost_excluded_layers,
                  "--auto: node-name globs (comma-separated or repeated) chosen for accuracy "
                  "but left out of the budget");
  cmd->add_option("--threads", o->threads,
                  "Threads for calibration and the accuracy fallback (default: all cores)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->callback([o, exit_code] { *exit_code = Quantize(*o); });
}

}  // namespace qtune::cli
