// Session: the runtime's public entry point. Create() takes a model graph, cleans a
// private copy with the pass pipeline and keeps it; Run() executes it, compiling a plan
// (with fusions) the first time it sees a set of input sizes and reusing it afterwards.
//
// Thread safety: Run() may be called from several threads; calls are serialized (a plan
// owns one arena).
//
// NaN and infinity: oneDNN's max-based kernels (ReLU, pooling, clamps) turn NaN into a
// number. A Run whose floating-point inputs hold NaN or +-inf therefore runs on the
// reference tier (compiled once per sizes, like the fast plan), which propagates them as
// ONNX Runtime and numpy do. Checking costs one pass over the inputs.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/compile.h"

namespace qtune::runtime {

struct SessionOptions {
  int threads = 1;
  bool use_onednn = true;  // false: reference kernels only
  bool optimize = true;    // run the pass pipeline and the runtime fusions
  bool profile = false;    // time every step (Plan::ProfileToString)
  bool bf16 = false;       // fp32 Conv/MatMul/Gemm compute in bfloat16 (CompileOptions::bf16)
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> Create(const ir::Graph& graph,
                                                   const SessionOptions& options);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Inputs by graph input name (every graph input, any order). Outputs in graph order.
  // Errors name the input whose name, data type or rank is wrong.
  StatusOr<NamedTensors> Run(const NamedTensors& inputs);

  // Compiles (or finds) the plan for these input sizes without running it.
  StatusOr<const Plan*> Prepare(const std::map<std::string, std::vector<int64_t>>& input_sizes);

  const ir::Graph& graph() const { return *graph_; }
  const SessionOptions& options() const { return options_; }

 private:
  Session(std::unique_ptr<ir::Graph> graph, SessionOptions options)
      : graph_(std::move(graph)), options_(options) {}
  // `reference`: the plan of reference kernels (see NaN and infinity above).
  StatusOr<Plan*> PlanFor(const std::map<std::string, std::vector<int64_t>>& input_sizes,
                          bool reference = false);

  std::unique_ptr<ir::Graph> graph_;
  SessionOptions options_;
  std::mutex mutex_;
  std::map<std::pair<std::map<std::string, std::vector<int64_t>>, bool>, std::unique_ptr<Plan>>
      plans_;  // by input sizes and `reference`
  std::map<const Plan*, std::shared_ptr<std::byte[]>> arenas_;
};

}  // namespace qtune::runtime
