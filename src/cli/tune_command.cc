// qtune tune MODEL --calib DATA -o MODEL.qtc [...]: picks the fastest deployment that passes
// an accuracy check and saves it as a weight-free checkpoint (docs/tune.md).

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output_paths.h"
#include "cli/redis_flags.h"
#include "core/json_limits.h"
#include "core/progress.h"
#include "ir/onnx_io.h"
#include "measure/measure_executable.h"
#include "quant/recipe.h"
#include "report/report.h"
#include "tune/tune.h"

namespace qtune::cli {
namespace {

namespace fs = std::filesystem;

struct TuneCliOptions {
  std::string model_path;
  std::string output_path;
  tune::TuneOptions tune;
  bool json = false;
};

int TuneModel(TuneCliOptions& o) {
  std::vector<std::string> inputs = {o.model_path};
  for (const std::string& spec : o.tune.calib_specs) inputs.push_back(InputArgPath(spec));
  if (!o.tune.autotune_dir.empty()) inputs.push_back(o.tune.autotune_dir + "/plan.json");
  if (int code = CheckOutputIsNotAnInput("-o", o.output_path, inputs); code != kExitOk) {
    return code;
  }
  if (int code = CheckOutputIsNotAnInput("-o", o.output_path + ".sha256", inputs);
      code != kExitOk) {
    return code;
  }
  o.tune.worker_executable = measure::ThisExecutable();
  // Before calibration and measuring: the checkpoint, its .sha256 and report go there, and
  // the candidates and state log into the work dir.
  if (int code = CheckOutputWritable("-o", o.output_path); code != kExitOk) return code;
  if (int code = CheckDirWritable("--work-dir", o.tune.work_dir); code != kExitOk) return code;
  // The recipe as quantize takes it: what its YAML asks for is a usage error (exit 2).
  if (auto recipe = quant::LoadRecipe(o.tune.recipe); !recipe.ok()) {
    return ReportRecipeError(recipe.status());
  }
  if (o.json) SetProgressEnabled(false);
  o.tune.show_progress = !o.json;
  auto model = ir::LoadModel(o.model_path);
  if (!model.ok()) return ReportAndExitCode(model.status());
  auto result = tune::Tune(**model, o.tune);
  if (!result.ok()) return ReportAndExitCode(result.status());
  Status saved = tune::SaveTuned(o.output_path, *result);
  if (!saved.ok()) return ReportAndExitCode(saved);
  const nlohmann::json j = tune::TuneResultToJson(*result, o.model_path, o.output_path);
  // The HTML report beside the checkpoint (docs/report.md); a failure to write it is a
  // warning: the checkpoint is what the run is for.
  const std::string html = fs::path(o.output_path).replace_extension(".report.html").string();
  if (Status written = report::WriteTuneReport(j, html); !written.ok()) {
    std::fprintf(stderr, "qtune: warning: report not written: %s\n", written.message().c_str());
  }
  if (o.json) {
    std::printf("%s\n", DumpJson(j, 2).c_str());
  } else {
    std::printf("%s", tune::FormatTuneTable(*result).c_str());
    std::printf(
        "wrote %s and %s.sha256 (no weights: load it with the model, e.g. qtune run %s "
        "--checkpoint %s ...)\n",
        o.output_path.c_str(), o.output_path.c_str(), o.model_path.c_str(), o.output_path.c_str());
    std::printf("report %s\n", html.c_str());
  }
  return kExitOk;
}

}  // namespace

void AddTuneCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<TuneCliOptions>();
  tune::TuneOptions& t = o->tune;
  CLI::App* cmd = app.add_subcommand(
      "tune", "Pick the fastest deployment that passes an accuracy check; save a checkpoint");
  cmd->add_option("model", o->model_path, "ONNX model file")->required();
  cmd->add_option("--calib", t.calib_specs,
                  "Calibration data: NAME=FILE.npy (repeatable), FILE.npz, or an image folder")
      ->required();
  cmd->add_option("--preprocess", t.preprocess, "Image preprocess spec (image folders)");
  cmd->add_option("-o,--output", o->output_path, "Checkpoint to write (MODEL.qtc)")->required();
  cmd->add_option("--candidates", t.candidates,
                  "Comma-separated: fp32,bf16,int8,int8-fallback,autotuned")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--threads", t.threads, "Comma-separated thread counts to try")
      ->delimiter(',')
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--strategy", t.strategy,
                  "min-latency | max-throughput | first-wins | latency-budget=MS")
      ->capture_default_str();
  cmd->add_option("--min-sqnr", t.min_sqnr_db, "Accuracy check: output SQNR against fp32, in dB")
      ->capture_default_str();
  cmd->add_option("--check-samples", t.check_samples, "Calibration samples the check runs on")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--calib-samples", t.max_calib_samples,
                  "Calibrate int8 on at most this many samples (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--batch", t.batch_size, "Batch size measured (a free batch axis)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16))
      ->capture_default_str();
  cmd->add_option("--autotune-dir", t.autotune_dir,
                  "An autotune work dir holding plan.json (the autotuned candidate)");
  cmd->add_option("--recipe", t.recipe, "Quantization recipe of the int8 candidates")
      ->capture_default_str();
  cmd->add_option("--work-dir", t.work_dir,
                  "Candidate models and state log (default: a temporary folder); the same DIR "
                  "again takes the rows measured before instead of measuring them again");
  cmd->add_flag("--force-new", t.force_new,
                "Start over when the work dir's state log is from another model or other "
                "measuring options (the old log is kept beside it)");
  cmd->add_option("--iters", t.iters, "Timed runs per model per round")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--rounds", t.rounds, "Candidate/fp32 alternations per measurement")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--benchmark", t.benchmark,
                  "inprocess (this machine) | redis (qtune workers with each --threads count, "
                  "docs/workers.md)")
      ->check(CLI::IsMember({"inprocess", "redis"}))
      ->capture_default_str();
  AddRedisFlags(cmd, t.redis_url, t.queue, t.worker_wait_s);
  cmd->add_flag("--json", o->json, "Print the result as JSON");
  cmd->callback([o, exit_code] { *exit_code = TuneModel(*o); });
}

}  // namespace qtune::cli
