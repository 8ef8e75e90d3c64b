// qtune bench MODEL [--threads N] [--warmup W] [--iters N] [--shape NAME=1x3x224x224]
//     [--input NAME=FILE.npy] [--json]
//     [--checkpoint MODEL.qtc [--no-verify] [--allow-weight-mismatch]]
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/checkpoint_flags.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/tensor_args.h"
#include "cli/thread_policy_flag.h"
#include "core/json_limits.h"
#include "ir/onnx_io.h"
#include "runtime/benchmark.h"
#include "runtime/session.h"
#include "tune/tune.h"

namespace qtune::cli {
namespace {

struct BenchOptions {
  std::string model_path;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;  // --input: data to time on instead of random
  int threads = 1;
  std::string thread_policy;  // --thread-policy; empty: QTUNE_THREAD_POLICY or adaptive
  int warmup = 5;
  int iters = 50;
  uint64_t seed = 0;
  bool reference = false;
  bool bf16 = false;  // fp32 Conv/MatMul/Gemm compute in bfloat16
  bool profile = false;
  bool json = false;
  CheckpointFlags tuned;  // a `qtune tune` checkpoint: the session comes from LoadTuned
};

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

int Bench(const BenchOptions& options) {
  auto thread_policy = ResolveThreadPolicy(options.thread_policy);
  if (!thread_policy.ok()) return ReportUsageError(thread_policy.status());
  auto graph = ir::LoadModel(options.model_path);
  if (!graph.ok()) return ReportAndExitCode(graph.status());
  auto shapes = ParseShapes(options.shapes);
  if (!shapes.ok()) return ReportUsageError(shapes.status());
  auto input_args = ParseInputArgs(options.inputs, **graph);
  if (!input_args.ok()) return ReportUsageError(input_args.status());
  auto given = LoadInputs(*input_args);
  if (!given.ok()) return ReportAndExitCode(given.status());
  for (const auto& [name, t] : *given) {
    if (shapes->count(name)) {
      std::fprintf(stderr,
                   "qtune: error: input '%s' has both --input and --shape; its file "
                   "gives its sizes\n",
                   name.c_str());
      return kExitUsage;
    }
    shapes->emplace(name, t.sizes());
  }
  if (options.tuned.given() && (options.reference || options.bf16)) {
    std::fprintf(stderr,
                 "qtune: error: --reference/--bf16 and --checkpoint exclude each other "
                 "(the checkpoint says how the model runs)\n");
    return kExitUsage;
  }
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<runtime::Session> session;
  std::map<std::string, std::vector<int64_t>> tuned_sizes;
  int threads = options.threads;
  if (!options.tuned.given()) {
    runtime::SessionOptions session_options;
    session_options.threads = options.threads;
    session_options.thread_policy = *thread_policy;
    session_options.use_onednn = !options.reference;
    session_options.bf16 = options.bf16;
    session_options.profile = options.profile;
    auto created = runtime::Session::Create(**graph, session_options);
    if (!created.ok()) return ReportAndExitCode(created.status());
    session = std::move(created).value();
  } else {
    tune::LoadTunedOptions load = options.tuned.LoadOptions();
    load.thread_policy = *thread_policy;
    auto tuned = tune::LoadTunedSession(**graph, options.tuned.checkpoint, load);
    if (!tuned.ok()) return ReportAndExitCode(tuned.status());
    session = std::move(tuned->session);
    tuned_sizes = tuned->input_sizes;
    threads = tuned->threads;
    if (!options.json) {
      std::printf("checkpoint %s: %s, %d thread(s)%s\n", options.tuned.checkpoint.c_str(),
                  tuned->candidate.c_str(), tuned->threads, tuned->reused_cache ? " (cached)" : "");
    }
  }
  double optimize_ms = MillisSince(start);
  // The checkpoint's measured sizes unless --shape overrides them.
  for (const auto& [name, dims] : tuned_sizes) shapes->emplace(name, dims);
  auto sizes = ResolveInputSizes(**graph, *shapes);
  if (!sizes.ok()) return ReportUsageError(sizes.status());
  auto inputs = RandomInputs(**graph, *sizes, options.seed);
  if (!inputs.ok()) return ReportAndExitCode(inputs.status());
  // The given inputs replace their random stand-ins.
  for (auto& [name, t] : *inputs) {
    for (const auto& [given_name, given_tensor] : *given) {
      if (given_name == name) t = given_tensor;
    }
  }
  start = std::chrono::steady_clock::now();
  // A model with data-dependent sizes has no single plan: its stages compile during the
  // warm-up runs (runtime/dynamic/graph_runner.h).
  auto prepared = session->Prepare(*sizes);
  if (!prepared.ok() && prepared.status().code() != StatusCode::kFailedPrecondition) {
    return ReportAndExitCode(prepared.status());
  }
  const runtime::Plan* plan = prepared.ok() ? *prepared : nullptr;
  const size_t steps = plan != nullptr ? plan->steps.size() : 0;
  double compile_ms = MillisSince(start);

  auto stats = runtime::MeasureLatency(
      *session, *inputs, runtime::LatencyOptions{.warmup = options.warmup, .iters = options.iters});
  if (!stats.ok()) return ReportAndExitCode(stats.status());
  double median = stats->median_ms, p90 = stats->p90_ms, p99 = stats->p99_ms, min = stats->min_ms;
  // Warm-up and timed runs by the thread count they used (adaptive policy: can be several).
  nlohmann::json runs_by_threads = nlohmann::json::object();
  std::string runs_text;
  for (const auto& [count, runs] : session->RunsByThreads()) {
    runs_by_threads[std::to_string(count)] = runs;
    runs_text +=
        (runs_text.empty() ? "" : ", ") + std::to_string(runs) + " on " + std::to_string(count);
  }
  bool emulated_fp8 = false;
  for (const ir::Value* v : session->graph().initializers()) {
    DataType t = v->dtype();
    emulated_fp8 |= t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E5M2;
  }
  if (options.json) {
    nlohmann::json j = {{"model", options.model_path},
                        {"threads", threads},
                        {"thread_policy", runtime::ThreadPolicyName(*thread_policy)},
                        {"checkpoint", options.tuned.checkpoint},
                        {"iters", options.iters},
                        {"warmup", options.warmup},
                        {"median_ms", median},
                        {"p90_ms", p90},
                        {"p99_ms", p99},
                        {"runs_by_threads", runs_by_threads},
                        {"min_ms", min},
                        {"optimize_ms", optimize_ms},
                        {"compile_ms", compile_ms},
                        {"steps", steps},
                        {"fp8_emulated", emulated_fp8}};
    std::printf("%s\n", DumpJson(j, 2).c_str());
  } else {
    std::printf("model    %s\nthreads  %d (%s)   iters %d (warmup %d)\n",
                options.model_path.c_str(), threads, runtime::ThreadPolicyName(*thread_policy),
                options.iters, options.warmup);
    std::printf("latency  median %.3f ms   p90 %.3f ms   p99 %.3f ms   min %.3f ms\n", median, p90,
                p99, min);
    if (!runs_text.empty()) std::printf("runs     %s thread(s)\n", runs_text.c_str());
    std::printf("prepare  optimize %.1f ms   compile %.1f ms   %zu steps\n", optimize_ms,
                compile_ms, steps);
    if (options.profile && plan != nullptr) std::printf("\n%s", plan->ProfileToString().c_str());
    if (options.profile && plan == nullptr) {
      std::printf("\n%s", session->DescribeLastRun().c_str());
    }
    if (emulated_fp8) {
      std::printf("note     FP8 is emulated on this CPU: this latency is not FP8 speed\n");
    }
  }
  return kExitOk;
}

}  // namespace

void AddBenchCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure a model's latency on random inputs");
  cmd->add_option("model", options->model_path, "ONNX model file")->required();
  cmd->add_option("--shape", options->shapes,
                  "NAME=1x3x224x224: sizes of an input (needed for symbolic dims)");
  cmd->add_option("-i,--input", options->inputs,
                  "Time on this data instead of random: NAME=FILE.npy (repeatable), FILE.npy "
                  "(single-input model) or FILE.npz; inputs not given stay random");
  cmd->add_option("--threads", options->threads, "Intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  AddThreadPolicyFlag(cmd, options->thread_policy);
  cmd->add_option("--warmup", options->warmup, "Untimed runs first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--iters", options->iters, "Timed runs")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--seed", options->seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_flag("--reference", options->reference, "Use only the reference kernels");
  cmd->add_flag("--bf16", options->bf16,
                "Compute fp32 Conv/MatMul/Gemm in bfloat16 (fp32 accumulation; fast on CPUs "
                "with AMX or avx512_bf16)");
  cmd->add_flag("--profile", options->profile,
                "Time every step and print where the time goes (adds a little overhead)");
  cmd->add_flag("--json", options->json, "Print the result as JSON");
  AddCheckpointFlags(cmd, options->tuned, "Measure");
  cmd->callback([options, exit_code] { *exit_code = Bench(*options); });
}

}  // namespace qtune::cli
