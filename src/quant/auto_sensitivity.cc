#include "quant/auto_sensitivity.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "quant/export_qdq.h"
#include "runtime/session.h"

namespace qtune::quant {

StatusOr<std::unique_ptr<ir::Graph>> ExportApplied(const ir::Graph& float_graph,
                                                   const AppliedFormats& applied) {
  std::unique_ptr<ir::Graph> graph = float_graph.Clone();
  RETURN_IF_ERROR(ExportQdq(*graph, applied.plan, ExportOptions{}).status());
  auto& props = graph->info().metadata_props;
  std::erase_if(props, [](const auto& kv) { return kv.first == runtime::kBf16NodesMetadataKey; });
  if (!applied.bf16_nodes.empty()) {
    props.emplace_back(runtime::kBf16NodesMetadataKey,
                       fmt::format("{}", fmt::join(applied.bf16_nodes, ",")));
  }
  return graph;
}

StatusOr<std::unique_ptr<AutoMeter>> AutoMeter::Create(const ir::Graph& float_graph,
                                                       const QuantPlan& plan,
                                                       const std::vector<AutoGroup>& groups,
                                                       CalibrationSource& source, int64_t samples,
                                                       int threads) {
  std::unique_ptr<AutoMeter> meter(new AutoMeter(float_graph, plan, groups));
  ASSIGN_OR_RETURN(meter->comparer_, OutputComparer::Create(float_graph, source, samples, threads));
  return meter;
}

StatusOr<double> AutoMeter::SqnrDb(const std::vector<AutoFormat>& formats) const {
  AppliedFormats applied = ApplyFormats(float_graph_, plan_, groups_, formats);
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, ExportApplied(float_graph_, applied));
  ASSIGN_OR_RETURN(OutputSqnr sqnr, comparer_->Compare(*graph));
  return sqnr.db;
}

StatusOr<std::vector<std::vector<double>>> AutoMeter::Sensitivity(
    const std::function<void()>& progress) const {
  std::vector<std::vector<double>> out(groups_.size());
  std::vector<AutoFormat> formats(groups_.size(), AutoFormat::kFp32);
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (AutoFormat f : groups_[g].formats) {
      if (f == AutoFormat::kFp32) {
        out[g].push_back(std::numeric_limits<double>::infinity());
        continue;
      }
      formats[g] = f;
      auto db = SqnrDb(formats);
      if (!db.ok()) {
        return db.status().WithContext(fmt::format("measuring layer '{}' alone in {}",
                                                   groups_[g].nodes.front(), AutoFormatName(f)));
      }
      out[g].push_back(*db);
    }
    formats[g] = AutoFormat::kFp32;
    if (progress) progress();
  }
  return out;
}

}  // namespace qtune::quant
