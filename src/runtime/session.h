// Session: the runtime's public entry point. Create() takes a model graph, cleans a
// private copy with the pass pipeline and keeps it; Run() executes it, compiling a plan
// (with fusions) the first time it sees a set of input sizes and reusing it afterwards.
//
// Thread safety: Run() may be called from several threads; calls are serialized (a plan
// owns one arena).
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
  StatusOr<Plan*> PlanFor(const std::map<std::string, std::vector<int64_t>>& input_sizes);

  std::unique_ptr<ir::Graph> graph_;
  SessionOptions options_;
  std::mutex mutex_;
  std::map<std::map<std::string, std::vector<int64_t>>, std::unique_ptr<Plan>> plans_;
  std::map<const Plan*, std::shared_ptr<std::byte[]>> arenas_;
};

}  // namespace qtune::runtime
