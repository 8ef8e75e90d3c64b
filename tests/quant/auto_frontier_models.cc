#include "auto_frontier_models.h"

#include <cstdio>

#include "quant/auto_groups.h"
#include "quant/auto_sensitivity.h"

namespace qtune::quant::testing {

StatusOr<AutoSearchModels> SearchAndExport(const QuantizeModelResult& base, const Recipe& recipe,
                                           const InputSizes& sizes, CalibrationSource& source,
                                           const AutoOptions& options) {
  const ir::Graph& graph = *base.float_graph;
  QuantPlan plan = base.plan;
  AutoSearchModels out;
  ASSIGN_OR_RETURN(out.report, RunAutoSearch(graph, plan, recipe, sizes, source, options));
  AutoGroupOptions group_options{options.candidate_formats, {}, options.bf16_available};
  ASSIGN_OR_RETURN(std::vector<AutoGroup> groups,
                   BuildAutoGroups(graph, base.plan, recipe, sizes, group_options));

  std::vector<AutoFormat> all_fp32(groups.size(), AutoFormat::kFp32);
  ASSIGN_OR_RETURN(out.fp32.graph,
                   ExportApplied(graph, ApplyFormats(graph, base.plan, groups, all_fp32)));
  out.fp32.what = "fp32";
  for (const AutoFrontierPoint& point : out.report.frontier) {
    AppliedFormats applied = ApplyFormats(graph, base.plan, groups, point.formats);
    char what[160];
    std::snprintf(what, sizeof(what), "frontier %5.2f bits, %5.1f / %5.1f dB, %d bf16 layers",
                  point.effective_bits, point.predicted_db, point.measured_db,
                  static_cast<int>(applied.bf16_nodes.size()));
    ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> exported, ExportApplied(graph, applied));
    out.frontier.push_back({what, std::move(exported)});
  }
  ASSIGN_OR_RETURN(out.chosen.graph, ExportApplied(graph, {plan, out.report.bf16_nodes}));
  char what[160];
  std::snprintf(what, sizeof(what), "--auto --min-sqnr %.0f: %5.2f bits, %5.1f dB",
                options.min_sqnr_db.value_or(0.0), out.report.effective_bits,
                out.report.measured_db);
  out.chosen.what = what;
  return out;
}

}  // namespace qtune::quant::testing
