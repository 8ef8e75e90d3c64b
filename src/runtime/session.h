// Session: the runtime's public entry point. Create() takes a model graph, cleans a
// private copy with the pass pipeline and keeps it; Run() executes it, compiling a plan
// (with fusions) the first time it sees a set of input sizes and reusing it afterwards.
//
// Thread safety: Run() may be called from several threads; calls are serialized: a plan
// owns one arena, and its kernels keep their argument lists bound to it between runs (a
// warm run allocates nothing). Two sessions run in parallel: create one per thread.
//
// NaN and infinity: oneDNN's max-based kernels (ReLU, pooling, clamps) turn NaN into a
// number. A Run whose floating-point inputs hold NaN or +-inf therefore runs on the
// reference tier (compiled once per sizes, like the fast plan), which propagates them as
// ONNX Runtime and numpy do. Checking costs one pass over the inputs. A NaN or inf that a
// step creates from finite inputs (Div by 0, Log of a negative, ...) is caught where it
// starts (plan/non_finite.h) and the call runs again on the reference tier.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/run_value.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/compile.h"
#include "runtime/dynamic/graph_runner.h"
#include "runtime/plan/plan_executor.h"
#include "runtime/thread_budget.h"

namespace qtune::runtime {

struct SessionOptions {
  int threads = 1;
  // kAdaptive: each run uses `threads` less the cores other processes keep busy, with a
  // plan compiled per thread count on first use (thread_budget.h). kFixed: always
  // `threads`. User-facing sessions take ThreadPolicyFromEnvironment().
  ThreadPolicy thread_policy = ThreadPolicy::kFixed;
  bool use_onednn = true;  // false: reference kernels only
  bool optimize = true;    // run the pass pipeline and the runtime fusions
  // The graph has been through passes::RunPipeline already (tune::BuildTunedGraph): Create
  // does not run it again. The runtime fusions still follow `optimize`.
  bool graph_is_clean = false;
  bool profile = false;  // time every step (Plan::ProfileToString)
  bool bf16 = false;     // fp32 Conv/MatMul/Gemm compute in bfloat16 (CompileOptions::bf16)
  // These nodes compute in bfloat16 (CompileOptions::bf16_nodes). Session::Create adds
  // the names a model lists in its metadata_props entry kBf16NodesMetadataKey.
  std::set<std::string> bf16_nodes;
};

// ONNX metadata_props key of the per-layer bf16 format (`qtune quantize --auto`): the
// value is a comma-separated list of node names that qtune's engine computes in bfloat16.
// Other runtimes ignore it and run those layers in fp32.
inline constexpr char kBf16NodesMetadataKey[] = "qtune.bf16_nodes";

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using NamedValues = std::vector<std::pair<std::string, RunValue>>;

class Session {
 public:
  // Cleans a private copy of `graph` (one Graph::Clone, one pass pipeline run).
  static StatusOr<std::unique_ptr<Session>> Create(const ir::Graph& graph,
                                                   const SessionOptions& options);
  // Takes `graph` over instead of copying it (the caller's own copy, e.g. a checkpoint's
  // rebuilt graph). REQUIRES: graph != nullptr.
  static StatusOr<std::unique_ptr<Session>> Create(std::unique_ptr<ir::Graph> graph,
                                                   const SessionOptions& options);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Inputs by graph input name (every graph input, any order). Outputs in graph order.
  // Errors name the input whose name, data type or rank is wrong, or the output that is
  // a sequence or optional (use RunValues for those models).
  StatusOr<NamedTensors> Run(const NamedTensors& inputs);

  // Run for models whose inputs or outputs may be sequences or optionals (any model).
  StatusOr<NamedValues> RunValues(const NamedValues& inputs);

  // Compiles (or finds) the plan for these input sizes without running it.
  // FailedPrecondition when the model has sizes that depend on values computed at run
  // time (data-dependent sizes, sequences): its plans are compiled in stages while it
  // runs (dynamic/graph_runner.h); DescribeLastRun() shows them.
  StatusOr<const Plan*> Prepare(const std::map<std::string, std::vector<int64_t>>& input_sizes);

  // The plans and dynamic steps of the last run of a model with data-dependent sizes;
  // empty for a static-size model.
  std::string DescribeLastRun();

  const ir::Graph& graph() const { return *graph_; }
  const SessionOptions& options() const { return options_; }

  // How many runs of a compiled plan used each thread count (key: threads), since the
  // session was created; with ThreadPolicy::kAdaptive more than one count can appear.
  std::map<int, int64_t> RunsByThreads();

 private:
  Session(std::unique_ptr<ir::Graph> graph, SessionOptions options)
      : graph_(std::move(graph)), options_(options) {}
  // `reference`: the plan of reference kernels (see NaN and infinity above). `threads`:
  // the plan's thread count (0: options_.threads).
  StatusOr<PlanExecutor*> PlanFor(const std::map<std::string, std::vector<int64_t>>& input_sizes,
                                  bool reference = false, int threads = 0);
  // Fills given_ (the caller's tensors in graph input order) and checks names, types and
  // the sizes the model declares.
  Status MatchInputs(const NamedTensors& inputs);
  // The plan for given_'s sizes: the last one when they did not change.
  StatusOr<PlanExecutor*> ExecutorForGivenInputs(bool reference);
  // Binds input_views_ and output_views_ to `executor` (once per executor, then re-points)
  // and runs it.
  Status RunBound(PlanExecutor& executor, bool reference);
  std::string InputList() const;  // " 'a' 'b'", for errors
  // The staged runner for sizes that depend on values (created on first use).
  GraphRunner& Runner(bool reference);
  // Runs given_ through the staged runner (with the reference rerun for NaN made inside).
  StatusOr<std::vector<RunValue>> RunStaged(std::vector<RunValue> inputs, bool reference);
  StatusOr<NamedTensors> RunLocked(const NamedTensors& inputs);

  std::unique_ptr<ir::Graph> graph_;
  SessionOptions options_;
  std::mutex mutex_;
  struct PlanKey {
    std::map<std::string, std::vector<int64_t>> sizes;
    bool reference = false;
    int threads = 0;
    auto operator<=>(const PlanKey&) const = default;
  };
  std::map<PlanKey, std::unique_ptr<PlanExecutor>> plans_;  // null: sizes that depend on values
  std::map<const PlanExecutor*, PlanBinding> bindings_;
  // Per-run scratch, kept so a warm run allocates nothing for it.
  std::vector<const Tensor*> given_;
  std::vector<Tensor> input_views_, output_views_;
  PlanExecutor* last_ = nullptr;  // the plan of the last run, and whether it was `reference`
  bool last_reference_ = false;
  std::map<int, int64_t> runs_by_threads_;
  std::unique_ptr<GraphRunner> runners_[2];  // [reference]; see Runner()
  GraphRunner* last_runner_ = nullptr;
};

}  // namespace qtune::runtime
