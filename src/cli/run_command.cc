// qtune run MODEL --input NAME=FILE.npy|FILE.npy|FILE.npz ... [--output OUT.npz|OUT.npy]
//     [--threads N] [--json] [--print-plan [--explain-kernels] [--shape NAME=SIZES]]
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
#include "cli/thread_policy_flag.h"
#include "core/json_limits.h"
#include "core/npy.h"
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
  std::vector<std::string> shapes;  // --print-plan without --input
  int threads = 1;
  std::string thread_policy;  // --thread-policy; empty: QTUNE_THREAD_POLICY or adaptive
  bool reference = false;
  bool print_plan = false;
  bool explain_kernels = false;  // --print-plan with each step's passed-over kernels and why
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

bool EndsWithNpy(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

// The usage checks that need the model but no data: an output path the outputs fit.
int CheckOutputPath(const RunOptions& options, const ir::Graph& graph) {
  if (options.output_path.empty()) return kExitOk;
  if (EndsWithNpy(options.output_path) && graph.outputs().size() != 1) {
    std::fprintf(stderr,
                 "qtune: error: -o %s: a .npy file holds one array, but the model has %zu "
                 "outputs; write them all to a .npz file (-o OUT.npz)\n",
                 options.output_path.c_str(), graph.outputs().size());
    return kExitUsage;
  }
  return CheckOutputWritable("-o", options.output_path);
}

StatusOr<std::unique_ptr<runtime::Session>> MakeSession(const RunOptions& options,
                                                        const ir::Graph& graph) {
  ASSIGN_OR_RETURN(runtime::ThreadPolicy thread_policy, ResolveThreadPolicy(options.thread_policy));
  if (options.tuned.given()) {
    tune::LoadTunedOptions load = options.tuned.LoadOptions();
    load.thread_policy = thread_policy;
    return tune::LoadTuned(graph, options.tuned.checkpoint, load);
  }
  runtime::SessionOptions session_options;
  session_options.threads = options.threads;
  session_options.thread_policy = thread_policy;
  session_options.use_onednn = !options.reference;
  return runtime::Session::Create(graph, session_options);
}

// --print-plan without --input: the plan for the model's declared sizes (or --shape).
int PrintPlanOnly(const RunOptions& options, const ir::Graph& graph) {
  auto shapes = ParseShapes(options.shapes);
  if (!shapes.ok()) return ReportUsageError(shapes.status());
  auto sizes = ResolveInputSizes(graph, *shapes);
  if (!sizes.ok()) return ReportUsageError(sizes.status());
  auto session = MakeSession(options, graph);
  if (!session.ok()) return ReportAndExitCode(session.status());
  auto plan = (*session)->Prepare(*sizes);
  if (!plan.ok() && plan.status().code() == StatusCode::kFailedPrecondition) {
    return ReportUsageError(FailedPreconditionError(
        options.model_path +
        ": sizes depend on values computed while it runs, so its plan is compiled in stages "
        "during a run; give --input to print the stages a run goes through"));
  }
  if (!plan.ok()) return ReportAndExitCode(plan.status());
  std::fprintf(stderr, "%s",
               (*plan)->ToString({.explain_kernels = options.explain_kernels}).c_str());
  return kExitOk;
}

int RunModel(RunOptions options) {
  if (options.explain_kernels) options.print_plan = true;
  if (options.tuned.given() && options.reference) {
    std::fprintf(stderr, "qtune: error: --reference and --checkpoint exclude each other\n");
    return kExitUsage;
  }
  if (options.inputs.empty() && !options.print_plan) {
    std::fprintf(stderr,
                 "qtune: error: run needs --input NAME=FILE.npy (or FILE.npy for a single-input "
                 "model, or FILE.npz); --print-plan alone prints the plan for the model's "
                 "declared sizes\n");
    return kExitUsage;
  }
  if (!options.inputs.empty() && !options.shapes.empty()) {
    std::fprintf(stderr,
                 "qtune: error: --shape is for --print-plan without --input; the "
                 "inputs' own sizes are used\n");
    return kExitUsage;
  }
  std::vector<std::string> input_paths = {options.model_path};
  if (options.tuned.given()) input_paths.push_back(options.tuned.checkpoint);
  for (const std::string& arg : options.inputs) input_paths.push_back(InputArgPath(arg));
  if (int code = CheckOutputIsNotAnInput("-o", options.output_path, input_paths); code != kExitOk) {
    return code;
  }
  auto graph = ir::LoadModel(options.model_path);
  if (!graph.ok()) return ReportAndExitCode(graph.status());
  if (options.inputs.empty()) return PrintPlanOnly(options, **graph);
  if (int code = CheckOutputPath(options, **graph); code != kExitOk) return code;
  auto input_args = ParseInputArgs(options.inputs, **graph);
  if (!input_args.ok()) return ReportUsageError(input_args.status());
  auto inputs = LoadInputs(*input_args);
  if (!inputs.ok()) return ReportAndExitCode(inputs.status());
  auto session = MakeSession(options, **graph);
  if (!session.ok()) return ReportAndExitCode(session.status());
  auto outputs = (*session)->Run(*inputs);
  if (!outputs.ok()) return ReportAndExitCode(outputs.status());
  if (options.print_plan) {
    std::map<std::string, std::vector<int64_t>> sizes;
    for (const auto& [name, t] : *inputs) sizes[name] = t.sizes();
    auto plan = (*session)->Prepare(sizes);
    if (plan.ok()) {
      std::fprintf(stderr, "%s",
                   (*plan)->ToString({.explain_kernels = options.explain_kernels}).c_str());
    } else {  // sizes that depend on values: the stages this run went through
      std::fprintf(stderr, "%s", (*session)->DescribeLastRun().c_str());
    }
  }
  if (!options.output_path.empty()) {
    Status s = EndsWithNpy(options.output_path)
                   ? WriteNpy(options.output_path, (*outputs)[0].second)
                   : WriteNpz(options.output_path, *outputs);
    if (!s.ok()) return ReportAndExitCode(s);
  }
  nlohmann::json report = nlohmann::json::array();
  for (const auto& [name, t] : *outputs) report.push_back(DescribeOutput(name, t));
  if (options.json) {
    std::printf("%s\n", DumpJson(report, 2).c_str());
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
                  "NAME=FILE.npy for one input (repeatable), FILE.npy for a single-input model, "
                  "or FILE.npz holding every input");
  cmd->add_option("-o,--output", options->output_path,
                  "Write the outputs to this .npz file (a .npy name: the single output as .npy)");
  cmd->add_option("--shape", options->shapes,
                  "NAME=1x3x224x224: input sizes for --print-plan without --input (symbolic dims)");
  cmd->add_option("--threads", options->threads, "Intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  AddThreadPolicyFlag(cmd, options->thread_policy);
  cmd->add_flag("--reference", options->reference,
                "Use only the reference kernels (slow; the correctness oracle)");
  cmd->add_flag("--print-plan", options->print_plan, "Print the compiled plan to stderr");
  cmd->add_flag("--explain-kernels", options->explain_kernels,
                "With --print-plan (implied): per step also its precision and the kernels "
                "passed over, each with the reason");
  cmd->add_flag("--json", options->json, "Print output summaries as JSON");
  AddCheckpointFlags(cmd, options->tuned, "Run");
  cmd->callback([options, exit_code] { *exit_code = RunModel(*options); });
}

}  // namespace qtune::cli
