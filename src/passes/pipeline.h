// The default pass pipeline: the one list that says which passes run and in what order.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

struct PassEntry {
  std::string_view name;  // snake_case, as in the file name: "fold_constants"
  PassFn fn;
};

// constants_to_initializers, remove_identity, fold_constants, fold_batchnorm,
// remove_dead_nodes — in that order.
std::span<const PassEntry> DefaultPipeline();

// What one pass did in one round.
struct PassRun {
  std::string_view name;
  int round = 0;  // 1-based
  bool changed = false;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  size_t initializers_before = 0;
  size_t initializers_after = 0;
};

struct PipelineReport {
  std::vector<PassRun> runs;  // every pass run, in order
  int rounds = 0;             // passes over the list, including the final unchanged one
  bool converged = false;     // false when max_pipeline_iterations ran out first
  size_t nodes_before = 0;
  size_t nodes_after = 0;

  // Number of rounds in which the named pass changed the graph.
  int TimesChanged(std::string_view pass_name) const;
  // One line per run that changed something, e.g.
  // "round 1 fold_constants: nodes 120 -> 97, initializers 40 -> 52".
  std::string ToString() const;
};

// Runs `passes` in order, repeating the list until a whole round changes nothing or
// options.max_pipeline_iterations rounds have run (then converged is false; the graph is
// still valid). A pass error is returned prefixed with the pass name. With
// options.verify_after_each_pass, ir::Verify() runs on the input graph and after every
// pass; a failure names the pass that broke the graph.
StatusOr<PipelineReport> RunPasses(ir::Graph& graph, std::span<const PassEntry> passes,
                                   const PassOptions& options);

// RunPasses(graph, DefaultPipeline(), options).
StatusOr<PipelineReport> RunPipeline(ir::Graph& graph, const PassOptions& options);

// How many times RunPipeline ran in this process (all threads): for tests that pin how
// often a flow cleans a model (once per session, tune::LoadTunedSession included).
int64_t PipelineRunCount();

}  // namespace qtune::passes
