#include "quant/accuracy_fallback.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "core/logging.h"
#include "core/progress.h"
#include "quant/output_sqnr.h"
#include "runtime/session.h"

namespace qtune::quant {
namespace {

// Measures `plan` exported on `float_graph` against the float model's outputs.
class PlanMeter {
 public:
  PlanMeter(const ir::Graph& float_graph, const OutputComparer& comparer)
      : float_graph_(float_graph), comparer_(comparer) {}

  StatusOr<double> SqnrDb(const QuantPlan& plan) const {
    std::unique_ptr<ir::Graph> graph = float_graph_.Clone();
    ExportOptions export_options;
    RETURN_IF_ERROR(ExportQdq(*graph, plan, export_options).status());
    ASSIGN_OR_RETURN(OutputSqnr sqnr, comparer_.Compare(*graph));
    if (!sqnr.non_finite_output.empty()) {
      QTUNE_LOG_WARNING(
          "accuracy fallback: the quantized model's '{}' is NaN or inf on the calibration "
          "samples; scored -inf dB (never reaches the target)",
          sqnr.non_finite_output);
    }
    last_non_finite_ = sqnr.non_finite_output;
    return sqnr.db;
  }
  // The NaN/inf tensor of the last SqnrDb call, or empty.
  const std::string& last_non_finite() const { return last_non_finite_; }

 private:
  const ir::Graph& float_graph_;
  const OutputComparer& comparer_;
  mutable std::string last_non_finite_;
};

// `plan` with only `node`'s inputs quantized.
QuantPlan OnlyLayer(const QuantPlan& plan, const std::string& node) {
  QuantPlan only = plan;
  std::vector<std::string> others;
  for (const std::string& n : plan.quantized_nodes) {
    if (n != node) others.push_back(n);
  }
  KeepLayersInFloat(only, others, std::vector<std::string>(others.size()));
  return only;
}

}  // namespace

void KeepLayersInFloat(QuantPlan& plan, const std::vector<std::string>& nodes,
                       const std::vector<std::string>& reasons) {
  const std::set<std::string> floating(nodes.begin(), nodes.end());
  for (QuantSite& site : plan.sites) {
    if (!site.enabled) continue;
    auto floats = [&](const auto& c) { return floating.count(c.first) > 0; };
    if (std::all_of(site.consumers.begin(), site.consumers.end(), floats)) {
      site.enabled = false;  // keeps its consumers: the summary shows where it was
      site.disabled_reason = kAccuracyFallbackReason;
    } else {
      std::erase_if(site.consumers, floats);
    }
  }
  std::erase_if(plan.quantized_nodes, [&](const std::string& n) { return floating.count(n) > 0; });
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!reasons[i].empty()) plan.skipped.push_back({nodes[i], "", reasons[i]});
  }
}

StatusOr<FallbackReport> FallBackSensitiveLayers(const ir::Graph& float_graph, QuantPlan& plan,
                                                 CalibrationSource& source,
                                                 const FallbackOptions& options) {
  // The search indexes the sensitivity list with max_float_fraction: outside [0, 1] it would
  // run past it.
  if (!(options.max_float_fraction >= 0.0 && options.max_float_fraction <= 1.0)) {
    return InvalidArgumentError(
        fmt::format("accuracy fallback: max_float_fraction must be in [0, 1], not {}",
                    options.max_float_fraction));
  }
  if (std::isnan(options.min_sqnr_db)) {
    return InvalidArgumentError("accuracy fallback: the target SQNR (min_sqnr_db) is NaN");
  }
  if (options.max_samples < 1 || options.threads < 1) {
    return InvalidArgumentError(
        fmt::format("accuracy fallback: max_samples ({}) and threads ({}) must be at least 1",
                    options.max_samples, options.threads));
  }
  FallbackReport report;
  report.target_db = options.min_sqnr_db;
  ASSIGN_OR_RETURN(auto comparer, OutputComparer::Create(float_graph, source, options.max_samples,
                                                         options.threads));
  report.samples = comparer->samples();
  report.measured = comparer->measured();
  PlanMeter meter(float_graph, *comparer);

  ASSIGN_OR_RETURN(report.sqnr_before_db, meter.SqnrDb(plan));
  report.non_finite_output = meter.last_non_finite();
  report.sqnr_after_db = report.sqnr_before_db;
  report.reached = report.sqnr_before_db >= options.min_sqnr_db;
  QTUNE_LOG_INFO("accuracy fallback: output SQNR {:.1f} dB on {} samples, target {:.1f} dB",
                 report.sqnr_before_db, report.samples, options.min_sqnr_db);
  if (report.reached || plan.quantized_nodes.empty()) return report;

  std::unique_ptr<ProgressBar> progress;
  if (options.show_progress) {
    progress = std::make_unique<ProgressBar>("layer sensitivity",
                                             static_cast<int64_t>(plan.quantized_nodes.size()));
  }
  for (const std::string& node : plan.quantized_nodes) {
    auto sqnr = meter.SqnrDb(OnlyLayer(plan, node));
    if (!sqnr.ok()) return sqnr.status().WithContext("measuring layer '" + node + "' alone");
    const ir::Node* n = float_graph.FindNode(node);
    report.sensitivity.push_back({node, n != nullptr ? n->op_type() : "?", *sqnr});
    if (progress) progress->Advance();
  }
  if (progress) progress->Finish();
  std::stable_sort(report.sensitivity.begin(), report.sensitivity.end(),
                   [](const auto& a, const auto& b) { return a.sqnr_db < b.sqnr_db; });

  // `requantized_db[i]`: the outputs' SQNR when the refinement quantized layer i again and
  // missed the target (NaN: not tried). A layer's reason says why it stays in float.
  const size_t num_layers = report.sensitivity.size();
  std::vector<double> requantized_db(num_layers, std::numeric_limits<double>::quiet_NaN());
  auto reason_for = [&](size_t i) {
    const std::string rank = fmt::format("sensitivity rank {} of {}, alone {:.1f} dB", i + 1,
                                         num_layers, report.sensitivity[i].sqnr_db);
    if (!std::isnan(requantized_db[i])) {
      return fmt::format(
          "accuracy fallback: quantizing it too gives {:.1f} dB, below the {:.1f} dB target "
          "({})",
          requantized_db[i], options.min_sqnr_db, rank);
    }
    return fmt::format("accuracy fallback: among the most sensitive layers ({}); target {:.1f} dB",
                       rank, options.min_sqnr_db);
  };
  // `floating[i]`: report.sensitivity[i] stays in float.
  auto plan_keeping = [&](const std::vector<bool>& floating) {
    QuantPlan candidate = plan;
    std::vector<std::string> nodes, reasons;
    for (size_t i = 0; i < floating.size(); ++i) {
      if (!floating[i]) continue;
      nodes.push_back(report.sensitivity[i].node);
      reasons.push_back(reason_for(i));
    }
    KeepLayersInFloat(candidate, nodes, reasons);
    return candidate;
  };
  auto prefix = [&](int64_t k) {
    std::vector<bool> floating(report.sensitivity.size(), false);
    std::fill(floating.begin(), floating.begin() + k, true);
    return floating;
  };
  // SQNR with the k most sensitive layers in float; k = 0 is the plan as calibrated.
  std::map<int64_t, double> by_prefix = {{0, report.sqnr_before_db}};
  auto measure_prefix = [&](int64_t k) -> StatusOr<double> {
    if (!by_prefix.count(k)) {
      ASSIGN_OR_RETURN(by_prefix[k], meter.SqnrDb(plan_keeping(prefix(k))));
      QTUNE_LOG_INFO("accuracy fallback: {} most sensitive layers in float -> {:.1f} dB", k,
                     by_prefix[k]);
    }
    return by_prefix[k];
  };

  // Doubling, then bisection, for the smallest prefix that reaches the target.
  const int64_t max_k =
      std::max<int64_t>(1, static_cast<int64_t>(options.max_float_fraction *
                                                static_cast<double>(report.sensitivity.size())));
  int64_t low = 0, high = 1;  // prefix `low` misses the target
  for (;;) {
    ASSIGN_OR_RETURN(double db, measure_prefix(high));
    if (db >= options.min_sqnr_db || high == max_k) break;
    low = high;
    high = std::min(high * 2, max_k);
  }
  if (by_prefix[high] >= options.min_sqnr_db) {
    while (high - low > 1) {
      const int64_t mid = (low + high) / 2;
      ASSIGN_OR_RETURN(double db, measure_prefix(mid));
      (db >= options.min_sqnr_db ? high : low) = mid;
    }
  } else {
    for (const auto& [k, db] : by_prefix) {
      if (db > by_prefix[high]) high = k;  // unreachable: the best prefix measured (maybe 0)
    }
  }
  std::vector<bool> floating = prefix(high);
  report.sqnr_after_db = by_prefix[high];
  report.reached = report.sqnr_after_db >= options.min_sqnr_db;

  // Refinement: quantize each fallen-back layer again, least sensitive first, where the
  // target still holds without it.
  for (int64_t i = high - 1; report.reached && i >= 0; --i) {
    floating[i] = false;
    ASSIGN_OR_RETURN(double db, meter.SqnrDb(plan_keeping(floating)));
    if (db >= options.min_sqnr_db) {
      QTUNE_LOG_INFO("accuracy fallback: '{}' quantized again -> {:.1f} dB",
                     report.sensitivity[i].node, db);
      report.sqnr_after_db = db;
    } else {
      floating[i] = true;
      requantized_db[i] = db;
    }
  }
  plan = plan_keeping(floating);
  for (size_t i = 0; i < floating.size(); ++i) {
    if (floating[i]) report.fallen_back.push_back(report.sensitivity[i].node);
  }
  return report;
}

}  // namespace qtune::quant
