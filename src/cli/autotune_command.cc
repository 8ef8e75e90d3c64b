// qtune autotune MODEL -o OUT.onnx --calib DATA --work-dir DIR [...]: latency-driven Q/DQ
// placement search with a crash-safe state log (docs/autotune.md).
#include <sys/stat.h>

#include <cstdio>
#include <memory>

#include "autotune/autotune.h"
#include "autotune/report.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output_paths.h"
#include "cli/redis_flags.h"
#include "core/json_limits.h"
#include "core/progress.h"
#include "measure/command_template.h"
#include "measure/measure_executable.h"
#include "quant/recipe.h"
#include "report/report.h"

namespace qtune::cli {
namespace {

struct AutotuneCliOptions {
  autotune::AutotuneOptions tune;
  bool json = false;
};

int Autotune(AutotuneCliOptions& o) {
  o.tune.worker_executable = measure::ThisExecutable();
  if (o.json) SetProgressEnabled(false);
  o.tune.show_progress = !o.json;
  struct stat in_stat {
  }, out_stat{};
  if (stat(o.tune.model_path.c_str(), &in_stat) == 0 &&
      stat(o.tune.output_path.c_str(), &out_stat) == 0 && in_stat.st_dev == out_stat.st_dev &&
      in_stat.st_ino == out_stat.st_ino) {
    std::fprintf(stderr,
                 "qtune: error: -o %s is the input model; write the tuned model elsewhere\n",
                 o.tune.output_path.c_str());
    return kExitUsage;
  }
  // Before calibration, which can take minutes: the command template, the work dir and
  // -o's folder.
  if (!o.tune.benchmark_command.empty()) {
    auto words = measure::SplitCommandTemplate(o.tune.benchmark_command);
    if (!words.ok()) return ReportUsageError(words.status());
  }
  if (int code = CheckDirWritable("--work-dir", o.tune.work_dir); code != kExitOk) return code;
  if (int code = CheckOutputWritable("-o", o.tune.output_path); code != kExitOk) return code;
  // The recipe as quantize takes it: what its YAML asks for is a usage error (exit 2).
  if (auto recipe = quant::LoadRecipe(o.tune.recipe); !recipe.ok()) {
    return ReportRecipeError(recipe.status());
  }
  auto report = autotune::RunAutotune(o.tune);
  if (!report.ok()) return ReportAndExitCode(report.status());
  // report.html beside report.json (docs/report.md); failing to write it is a warning.
  const std::string html = o.tune.work_dir + "/report.html";
  auto html_written = report::WriteReport(o.tune.work_dir, html);
  if (!html_written.ok()) {
    std::fprintf(stderr, "qtune: warning: report not written: %s\n",
                 html_written.status().message().c_str());
  }
  if (o.json) {
    std::printf("%s\n", DumpJson(*report, 2).c_str());
  } else {
    std::printf("%s", autotune::ReportToText(*report).c_str());
    std::printf("wrote     %s (work dir %s)\n", o.tune.output_path.c_str(),
                o.tune.work_dir.c_str());
    if (html_written.ok()) std::printf("report    %s\n", html.c_str());
  }
  return kExitOk;
}

}  // namespace

void AddAutotuneCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<AutotuneCliOptions>();
  autotune::AutotuneOptions& t = o->tune;
  CLI::App* cmd = app.add_subcommand(
      "autotune", "Find the fastest Q/DQ placement by measuring; resumable (--work-dir)");
  cmd->add_option("model", t.model_path, "Float ONNX model")->required();
  cmd->add_option("-o,--output", t.output_path, "Write the tuned QDQ model here")->required();
  cmd->add_option("--calib", t.calib_specs,
                  "Calibration data: FILE.npy, NAME=FILE.npy, FILE.npz or an image folder")
      ->required();
  cmd->add_option("--preprocess", t.preprocess, "Image preprocessing (see docs/calibration.md)");
  cmd->add_option("--recipe", t.recipe, "Preset or recipe YAML (quantizer configs, rules)")
      ->capture_default_str();
  cmd->add_option("--calib-samples", t.max_calib_samples, "Use at most this many samples (0: all)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--work-dir", t.work_dir,
                  "State log, models and report; the same DIR again resumes (warm restart)")
      ->required();
  cmd->add_option("--mode", t.mode, "quick | default | extensive (budget and repeats)")
      ->check(CLI::IsMember({"quick", "default", "extensive"}))
      ->capture_default_str();
  cmd->add_option("--start", t.start,
                  "Search from: auto (the faster baseline) | rule | fp32; the result is never "
                  "slower than the faster baseline")
      ->check(CLI::IsMember({"auto", "rule", "fp32"}))
      ->capture_default_str();
  cmd->add_option("--schemes-per-pattern", t.schemes_per_pattern,
                  "Measurements per pattern (default: the mode's)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--threads", t.threads, "Threads of the measured engine and calibration")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--min-sqnr", t.min_sqnr_db,
                  "Keep the outputs (logits) at this SQNR in dB; 0: latency only")
      ->check(CLI::Range(0.0, 200.0));
  cmd->add_option("--timeout", t.timeout_s, "Seconds one measurement may take")
      ->check(CLI::Range(0.01, 86400.0))
      ->capture_default_str();
  cmd->add_option("--retries", t.retries,
                  "Retries of a timed-out, crashed or unreachable measurement")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--seed", t.seed, "Seed of the random schemes")->capture_default_str();
  cmd->add_option("--benchmark", t.benchmark,
                  "inprocess (qtune's engine) | command | redis (qtune workers, docs/workers.md)")
      ->check(CLI::IsMember({"inprocess", "command", "redis"}))
      ->capture_default_str();
  cmd->add_option("--benchmark-command", t.benchmark_command,
                  "Measuring command with {model}, e.g. 'trtexec --onnx={model}'");
  cmd->add_option("--latency-regex", t.latency_regex,
                  "Regex whose first group is the latency in ms (default: qtune bench --json's "
                  "median_ms and trtexec's GPU Compute Time median)");
  AddRedisFlags(cmd, t.redis_url, t.queue, t.worker_wait_s);
  cmd->add_option("--parallel", t.parallel,
                  "With --benchmark redis: measurements in flight at once (one per worker); "
                  "the result is that of 1")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_flag("--allow-mixed-workers", t.allow_mixed_workers,
                "With --benchmark redis: also use workers on machines unlike the first one's");
  cmd->add_option("--pattern-cache", t.pattern_cache,
                  "JSON file of the best schemes per pattern: seeds this run, updated at the end");
  cmd->add_option("--import-qdq", t.import_qdq, "A QDQ model whose placement seeds the search");
  cmd->add_flag("--shape-aware", t.shape_aware, "Patterns differ by tensor shapes too");
  cmd->add_flag("--force-new", t.force_new,
                "Start over when the work dir's state log is from another model or other options "
                "(the old log is kept beside it)");
  cmd->add_flag("--json", o->json, "Print the report as JSON (docs/formats/autotune-report.md)");
  cmd->callback([o, exit_code] { *exit_code = Autotune(*o); });
}

}  // namespace qtune::cli
