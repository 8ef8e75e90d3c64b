// qtune run MODEL --input NAME=FILE.npy ... [--output OUT.npz] [--threads N] [--json]
//     [--checkpoint MODEL.qtc [--no-verify] [--allow-weight-mismatch]]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/checkpoint_flags.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output_paths.h"
#include "cli/tensor_args.h"
#include "core/npz.h"
#include "core/shape.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "tune/tune.h"

namespace qtune::cli {
namespace {

struct RunOptions {
  std::string model_path;
  std::vector<std::string> inputs;
  std::string output_path;
  int threads = 1;
  bool reference = false;
  bool print_plan = false;
  bool json = false;
  CheckpointFlags tuned;  // a `qtune tune` checkpoint: the session comes from LoadTuned
};

nlohmann::json DescribeOutput(const std::string& name, const Tensor& t) {
  nlohmann::json j = {
      {"name", name}, {"dtype", std::string(DataTypeName(t.dtype()))}, {"shape", t.sizes()}};
  if (t.dtype() == DataType::kFloat32 && t.num_elements() > 0) {
    auto v = t.span<float>();
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    double sum = 0;
    for (float x : v) sum += x;
    j["min"] = *lo;
    j["max"] = *hi;
    j["mean"] = sum / static_cast<double>(v.size());
    j["first"] = std::vector<float>(v.begin(), v.begin() + std::min<size_t>(v.size(), 8));
  }
  return j;
}

int RunModel(const RunOptions& options) {
  std::vector<std::string> input_paths = {options.model_path};
  if (options.tuned.given()) input_paths.push_back(options.tuned.checkpoint);
  for (const std::string& arg : options.inputs) input_paths.push_back(InputArgPath(arg));
  if (int code = CheckOutputIsNotAnInput("-o", options.output_path, input_paths); code != kExitOk) {
    return code;
  }
  auto graph = ir::LoadModel(options.model_path);
  if (!graph.ok()) return ReportAndExitCode(graph.status());
  auto inputs = LoadInputs(options.inputs);
  if (!inputs.ok()) return ReportAndExitCode(inputs.status());
  StatusOr<std::unique_ptr<runtime::Session>> session = InternalError("no session");
  if (!options.tuned.given()) {
    runtime::SessionOptions session_options;
    session_options.threads = options.threads;
    session_options.use_onednn = !options.reference;
    session = runtime::Session::Create(**graph, session_options);
  } else {
    if (options.reference) {
      std::fprintf(stderr, "qtune: error: --reference and --checkpoint exclude each other\n");
      return kExitUsage;
    }
    session = tune::LoadTuned(**graph, options.tuned.checkpoint, options.tuned.LoadOptions());
  }
  if (!session.ok()) return ReportAndExitCode(session.status());
  auto outputs = (*session)->Run(*inputs);
  if (!outputs.ok()) return ReportAndExitCode(outputs.status());
  if (options.print_plan) {
    std::map<std::string, std::vector<int64_t>> sizes;
    for (const auto& [name, t] : *inputs) sizes[name] = t.sizes();
    auto plan = (*session)->Prepare(sizes);
    if (plan.ok()) std::fprintf(stderr, "%s", (*plan)->ToString().c_str());
  }
  if (!options.output_path.empty()) {
    Status s = WriteNpz(options.output_path, *outputs);
    if (!s.ok()) return ReportAndExitCode(s);
  }
  nlohmann::json report = nlohmann::json::array();
  for (const auto& [name, t] : *outputs) report.push_back(DescribeOutput(name, t));
  if (options.json) {
    std::printf("%s\n", report.dump(2).c_str());
  } else {
    for (const auto& o : report) {
      std::printf("%s %s [%s]", o["name"].get<std::string>().c_str(),
                  o["dtype"].get<std::string>().c_str(),
                  SizesToString(o["shape"].get<std::vector<int64_t>>()).c_str());
      if (o.contains("mean")) {
        std::printf("  min %.6g max %.6g mean %.6g", o["min"].get<double>(), o["max"].get<double>(),
                    o["mean"].get<double>());
      }
      std::printf("\n");
    }
    if (!options.output_path.empty()) std::printf("wrote %s\n", options.output_path.c_str());
  }
  return kExitOk;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model on input tensors and save its outputs");
  cmd->add_option("model", options->model_path, "ONNX model file")->required();
  cmd->add_option("-i,--input", options->inputs,
                  "NAME=FILE.npy for one input (repeatable), or FILE.npz holding every input")
      ->required();
  cmd->add_option("-o,--output", options->output_path, "Write the outputs to this .npz file");
  cmd->add_option("--threads", options->threads, "Intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_flag("--reference", options->reference,
                "Use only the reference kernels (slow; the correctness oracle)");
  cmd->add_flag("--print-plan", options->print_plan, "Print the compiled plan to stderr");
  cmd->add_flag("--json", options->json, "Print output summaries as JSON");
  AddCheckpointFlags(cmd, options->tuned, "Run");
  cmd->callback([options, exit_code] { *exit_code = RunModel(*options); });
}

}  // namespace qtune::cli
