// GraphRunner: runs a graph in which some sizes, or some values' kinds, are known only by
// running it (data-dependent sizes: NonZero, NonMaxSuppression, a Reshape whose shape is
// computed, ...; sequences and optionals; If/Loop whose outputs change size).
//
// It runs the graph in stages. A stage is compiled for the sizes of the values that reach
// it: shape inference (InferShapesPartially) splits its nodes into static ones, which are
// compiled into an ordinary Plan (fusions, oneDNN kernels, one arena), and deferred ones.
// After the plan ran, the deferred nodes whose inputs are all there and whose sizes
// depend on values run as dynamic steps (dynamic/dynamic_step.h: reference or value
// kernels, or bodies through nested GraphRunners); everything after them forms the next
// stage, compiled for the sizes they produced. A small integer value that sets sizes
// (Reshape's shape, TopK's k, Slice's starts, ...) is compiled into the next stage as a
// constant, so that stage is static again.
//
// Every compiled stage is cached by the sizes (and bound values) of what reaches it, so a
// repeated call with the same sizes compiles nothing; at most kMaxCachedVariants variants
// are kept per stage (then that cache starts afresh).
//
// A graph with no deferred node is one stage: the Session keeps its own fast path for it
// and uses a GraphRunner only when shape inference defers something.
//
// Not thread-safe: the Session serializes runs.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/run_value.h"
#include "core/status.h"
#include "ir/graph.h"
#include "runtime/compile.h"

namespace qtune::runtime {

struct GraphRunnerOptions {
  CompileOptions compile;  // for every stage's plan (use_onednn false: reference only)
  bool profile = false;    // time the plans' steps (Plan::ProfileToString)
};

struct StageTemplate;
struct CompiledStage;

class GraphRunner {
 public:
  static constexpr size_t kMaxCachedVariants = 64;
  // A small value (at most this many elements) that sets sizes is compiled as a constant.
  static constexpr int64_t kMaxBoundElements = 4096;

  // `graph` (cleaned by the pass pipeline) must outlive the runner.
  GraphRunner(const ir::Graph& graph, GraphRunnerOptions options);
  ~GraphRunner();
  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;

  // `inputs`: one per graph input, in graph input order. Returns the graph outputs in
  // order. Errors name the node (a negative or absurd run-time size included).
  StatusOr<std::vector<RunValue>> Run(std::span<const RunValue> inputs);

  // The stages compiled for the last run: each stage's plan and dynamic steps.
  std::string LastRunToString() const;
  // How many stage variants were compiled so far (a cache miss each).
  int64_t stages_compiled() const { return stages_compiled_; }

 private:
  const ir::Graph& graph_;
  GraphRunnerOptions options_;
  std::unique_ptr<StageTemplate> root_;
  std::vector<const CompiledStage*> last_stages_;  // the stages of the last run
  int64_t stages_compiled_ = 0;
};

}  // namespace qtune::runtime
