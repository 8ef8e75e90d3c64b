#include "passes/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>

#include "core/logging.h"
#include "ir/verify.h"
#include "passes/constants_to_initializers.h"
#include "passes/fold_batchnorm.h"
#include "passes/fold_constants.h"
#include "passes/fold_conv_affine.h"
#include "passes/remove_dead_nodes.h"
#include "passes/remove_identity.h"

namespace qtune::passes {

std::span<const PassEntry> DefaultPipeline() {
  static constexpr std::array<PassEntry, 6> kPasses = {{
      {"constants_to_initializers", &ConstantsToInitializers},
      {"remove_identity", &RemoveIdentity},
      {"fold_constants", &FoldConstants},
      {"fold_batchnorm", &FoldBatchNorm},
      {"fold_conv_affine", &FoldConvAffine},
      {"remove_dead_nodes", &RemoveDeadNodes},
  }};
  return kPasses;
}

int PipelineReport::TimesChanged(std::string_view pass_name) const {
  return static_cast<int>(std::count_if(runs.begin(), runs.end(), [&](const PassRun& run) {
    return run.changed && run.name == pass_name;
  }));
}

std::string PipelineReport::ToString() const {
  std::string out;
  for (const PassRun& run : runs) {
    if (!run.changed) continue;
    out += fmt::format("round {} {}: nodes {} -> {}, initializers {} -> {}\n", run.round, run.name,
                       run.nodes_before, run.nodes_after, run.initializers_before,
                       run.initializers_after);
  }
  out += fmt::format("{} rounds{}; nodes {} -> {}\n", rounds, converged ? "" : " (not converged)",
                     nodes_before, nodes_after);
  return out;
}

StatusOr<PipelineReport> RunPasses(ir::Graph& graph, std::span<const PassEntry> passes,
                                   const PassOptions& options) {
  if (options.verify_after_each_pass) {
    RETURN_IF_ERROR(ir::Verify(graph).WithContext("graph is invalid before the passes ran"));
  }
  PipelineReport report;
  report.nodes_before = graph.num_nodes();
  for (int round = 1; round <= std::max(1, options.max_pipeline_iterations); ++round) {
    report.rounds = round;
    bool round_changed = false;
    for (const PassEntry& pass : passes) {
      PassRun run{.name = pass.name, .round = round};
      run.nodes_before = graph.num_nodes();
      run.initializers_before = graph.initializers().size();
      StatusOr<bool> changed = pass.fn(graph, options);
      if (!changed.ok()) return changed.status().WithContext("pass " + std::string(pass.name));
      run.changed = *changed;
      run.nodes_after = graph.num_nodes();
      run.initializers_after = graph.initializers().size();
      report.runs.push_back(run);
      round_changed |= run.changed;
      if (options.verify_after_each_pass) {
        Status verified = ir::Verify(graph);
        if (!verified.ok()) {
          return verified.WithContext("graph is invalid after pass " + std::string(pass.name));
        }
      }
    }
    if (!round_changed) {
      report.converged = true;
      break;
    }
  }
  report.nodes_after = graph.num_nodes();
  if (!report.converged) {
    QTUNE_LOG_WARNING("passes still changing the graph after {} rounds; stopping there",
                      report.rounds);
  }
  return report;
}

namespace {
std::atomic<int64_t> g_pipeline_runs{0};
}  // namespace

StatusOr<PipelineReport> RunPipeline(ir::Graph& graph, const PassOptions& options) {
  g_pipeline_runs.fetch_add(1, std::memory_order_relaxed);
  return RunPasses(graph, DefaultPipeline(), options);
}

int64_t PipelineRunCount() { return g_pipeline_runs.load(std::memory_order_relaxed); }

}  // namespace qtune::passes
