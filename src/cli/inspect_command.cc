// qtune inspect MODEL [--json]: the model's interface, opsets, op histogram and size.
// qtune inspect MODEL.qtc [--json] [--no-verify]: a `qtune tune` checkpoint's manifest,
// without the model (a file ending in .qtc, or any gzip file, is taken as a checkpoint).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/model_summary.h"
#include "core/json_limits.h"
#include "ir/onnx_io.h"
#include "tune/checkpoint.h"

namespace qtune::cli {
namespace {

struct InspectOptions {
  std::string model_path;
  bool json = false;
  bool no_verify = false;
};

std::string TextOr(const nlohmann::json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : DumpJson(*it);
}

int InspectCheckpoint(const InspectOptions& options) {
  tune::LoadCheckpointOptions load;
  load.verify = !options.no_verify;
  auto manifest = tune::ReadManifestOnly(options.model_path, load);
  if (!manifest.ok()) return ReportAndExitCode(manifest.status());
  nlohmann::json j = tune::ManifestToJson(*manifest);
  if (options.json) {
    std::printf("%s\n", DumpJson(j, 2).c_str());
    return kExitOk;
  }
  const nlohmann::json& t = manifest->tuning;
  std::printf("checkpoint %s\n", options.model_path.c_str());
  std::printf("format     %d   written by qtune %s at %s\n", manifest->format_version,
              manifest->qtune_version.c_str(), manifest->created_utc.c_str());
  std::printf("weights    %zu tensors, sha256 %s (not stored: supply the model to load)\n",
              manifest->weights.initializers.size(), manifest->weights.whole.c_str());
  if (t.is_object()) {
    std::printf("chosen     %s, %s thread(s) (strategy %s)\n", TextOr(t, "candidate", "?").c_str(),
                TextOr(t, "threads", "?").c_str(), TextOr(t, "strategy", "?").c_str());
    std::printf("inputs     %s\n", TextOr(t, "input_sizes", "?").c_str());
    std::printf("recipe     %s   min SQNR %s dB   %s\n", TextOr(t, "recipe", "?").c_str(),
                TextOr(t, "min_sqnr_db", "?").c_str(), TextOr(t, "cpu", "").c_str());
    auto table = t.find("table");
    if (table != t.end() && table->is_array()) {
      std::printf("candidates\n");
      for (const nlohmann::json& row : *table) {
        if (!row.is_object()) continue;
        std::printf("  %s %-14s threads %-3s %-4s latency %s ms  SQNR %s  %s\n",
                    row.value("chosen", false) ? "*" : " ", TextOr(row, "candidate", "?").c_str(),
                    TextOr(row, "threads", "?").c_str(), TextOr(row, "status", "?").c_str(),
                    TextOr(row, "latency_ms", "-").c_str(), TextOr(row, "sqnr_db", "-").c_str(),
                    TextOr(row, "why", "").c_str());
      }
    }
  }
  return kExitOk;
}

int RunInspect(const InspectOptions& options) {
  if (tune::LooksLikeCheckpoint(options.model_path)) return InspectCheckpoint(options);
  auto graph = ir::LoadModel(options.model_path);
  if (!graph.ok()) return ReportAndExitCode(graph.status());
  ModelSummary summary = SummarizeModel(**graph, options.model_path);
  if (options.json) {
    std::printf("%s\n", DumpJson(SummaryToJson(summary), 2).c_str());
  } else {
    std::printf("%s", SummaryToText(summary).c_str());
  }
  return kExitOk;
}

}  // namespace

void AddInspectCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Print a model's inputs, outputs, opsets, op histogram and parameter count");
  cmd->add_option("model", options->model_path,
                  "ONNX model file (.onnx), or a `qtune tune` checkpoint (.qtc)")
      ->required();
  cmd->add_flag("--json", options->json, "Print the summary as JSON (for scripts)");
  cmd->add_flag("--no-verify", options->no_verify,
                "Checkpoints: do not check against the .sha256 file (unsafe)");
  cmd->callback([options, exit_code] { *exit_code = RunInspect(*options); });
}

}  // namespace qtune::cli
