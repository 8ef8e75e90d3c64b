// qtune inspect MODEL [--json]: the model's interface, opsets, op histogram and size.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/model_summary.h"
#include "ir/onnx_io.h"

namespace qtune::cli {
namespace {

struct InspectOptions {
  std::string model_path;
  bool json = false;
};

int RunInspect(const InspectOptions& options) {
  auto graph = ir::LoadModel(options.model_path);
  if (!graph.ok()) return ReportAndExitCode(graph.status());
  ModelSummary summary = SummarizeModel(**graph, options.model_path);
  if (options.json) {
    std::printf("%s\n", SummaryToJson(summary).dump(2).c_str());
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
  cmd->add_option("model", options->model_path, "ONNX model file (.onnx)")->required();
  cmd->add_flag("--json", options->json, "Print the summary as JSON (for scripts)");
  cmd->callback([options, exit_code] { *exit_code = RunInspect(*options); });
}

}  // namespace qtune::cli
