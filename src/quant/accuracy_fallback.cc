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
#include "runtime/session.h"

namespace qtune::quant {
namespace {

using Outputs = std::vector<runtime::NamedTensors>;  // one entry per run of a sample batch

// The measured samples, cut into the batches the model accepts.
struct SampleBatches {
  std::vector<runtime::NamedTensors> batches;
  int64_t samples = 0;
};

StatusOr<SampleBatches> LoadSamples(const ir::Graph& graph, CalibrationSource& source,
                                    int64_t max_samples) {
  SampleBatches out;
  const std::optional<int64_t> fixed = FixedBatchSize(graph);
  // At least one batch of a fixed batch size, whatever max_samples says.
  int64_t total =
      std::min(source.num_samples(), std::max<int64_t>({max_samples, fixed.value_or(1), 1}));
  const int64_t batch = fixed.value_or(total);
  total = total / batch * batch;
  if (total <= 0) {
    return InvalidArgumentError(fmt::format(
        "accuracy fallback: {} gives no full batch of {} samples", source.Describe(), batch));
  }
  for (int64_t first = 0; first < total; first += batch) {
    ASSIGN_OR_RETURN(auto tensors, source.Batch(first, batch));
    runtime::NamedTensors inputs;
    for (auto& [name, tensor] : tensors) inputs.emplace_back(name, tensor.Clone());
    out.batches.push_back(std::move(inputs));
  }
  out.samples = total;
  return out;
}

// The tensors compared: every float32 graph output, or, for an output computed by Sigmoid
// or Softmax, that op's input (the logits): a saturated probability near 0 or 1 turns
// tiny logit changes into huge relative errors, or hides large ones.
std::vector<std::string> MeasuredValues(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (const ir::Value* output : graph.outputs()) {
    if (output->dtype() != DataType::kFloat32 && output->dtype() != DataType::kUndefined) continue;
    const ir::Node* producer = output->producer();
    const bool saturating = producer != nullptr && producer->num_inputs() == 1 &&
                            (producer->op_type() == "Sigmoid" || producer->op_type() == "Softmax");
    names.push_back(saturating ? producer->input(0)->name() : output->name());
  }
  return names;
}

// Runs `graph` on every batch; returns the `names` tensors, per batch, in `names` order.
StatusOr<Outputs> RunGraph(const ir::Graph& graph, const std::vector<std::string>& names,
                           const SampleBatches& samples, int threads) {
  std::unique_ptr<ir::Graph> clone = graph.Clone();
  for (const std::string& name : names) {
    ir::Value* value = clone->FindValue(name);
    if (value == nullptr) return InternalError("accuracy fallback: lost the value '" + name + "'");
    if (!value->is_graph_output()) RETURN_IF_ERROR(clone->AddOutput(value));
  }
  runtime::SessionOptions session_options;
  session_options.threads = threads;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(*clone, session_options));
  Outputs outputs;
  for (const auto& inputs : samples.batches) {
    ASSIGN_OR_RETURN(auto result, session->Run(inputs));
    runtime::NamedTensors picked;
    for (const std::string& name : names) {
      auto it = std::find_if(result.begin(), result.end(),
                             [&](const auto& named) { return named.first == name; });
      if (it == result.end()) return InternalError("accuracy fallback: no output '" + name + "'");
      picked.push_back(std::move(*it));
    }
    outputs.push_back(std::move(picked));
  }
  return outputs;
}

// Minimum over the float32 tensors of 10 log10(signal / noise), summed over all batches.
// Identical tensors give +inf.
double OutputSqnrDb(const Outputs& reference, const Outputs& measured) {
  double worst = std::numeric_limits<double>::infinity();
  for (size_t o = 0; o < reference.front().size(); ++o) {
    if (reference.front()[o].second.dtype() != DataType::kFloat32) continue;
    double signal = 0, noise = 0;
    for (size_t b = 0; b < reference.size(); ++b) {
      auto ref = reference[b][o].second.span<float>();
      auto got = measured[b][o].second.span<float>();
      for (size_t i = 0; i < ref.size(); ++i) {
        const double d = static_cast<double>(ref[i]) - got[i];
        signal += static_cast<double>(ref[i]) * ref[i];
        noise += d * d;
      }
    }
    if (noise > 0) worst = std::min(worst, 10.0 * std::log10(std::max(signal, 1e-30) / noise));
  }
  return worst;
}

// Measures `plan` exported on `float_graph` against the reference outputs.
class PlanMeter {
 public:
  PlanMeter(const ir::Graph& float_graph, std::vector<std::string> names, SampleBatches samples,
            Outputs reference, int threads)
      : float_graph_(float_graph),
        names_(std::move(names)),
        samples_(std::move(samples)),
        reference_(std::move(reference)),
        threads_(threads) {}

  StatusOr<double> SqnrDb(const QuantPlan& plan) const {
    std::unique_ptr<ir::Graph> graph = float_graph_.Clone();
    ExportOptions export_options;
    RETURN_IF_ERROR(ExportQdq(*graph, plan, export_options).status());
    ASSIGN_OR_RETURN(Outputs outputs, RunGraph(*graph, names_, samples_, threads_));
    return OutputSqnrDb(reference_, outputs);
  }

 private:
  const ir::Graph& float_graph_;
  std::vector<std::string> names_;
  SampleBatches samples_;
  Outputs reference_;
  int threads_;
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
  FallbackReport report;
  report.target_db = options.min_sqnr_db;
  ASSIGN_OR_RETURN(SampleBatches samples, LoadSamples(float_graph, source, options.max_samples));
  report.samples = samples.samples;
  std::vector<std::string> names = MeasuredValues(float_graph);
  report.measured = names;
  ASSIGN_OR_RETURN(Outputs reference, RunGraph(float_graph, names, samples, options.threads));
  bool any_float = false;
  for (const auto& [name, tensor] : reference.front())
    any_float = any_float || tensor.dtype() == DataType::kFloat32;
  if (!any_float) {
    return InvalidArgumentError("accuracy fallback: the model has no float32 output to measure");
  }
  PlanMeter meter(float_graph, std::move(names), std::move(samples), std::move(reference),
                  options.threads);

  ASSIGN_OR_RETURN(report.sqnr_before_db, meter.SqnrDb(plan));
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

  // `floating[i]`: report.sensitivity[i] stays in float.
  auto plan_keeping = [&](const std::vector<bool>& floating) {
    QuantPlan candidate = plan;
    std::vector<std::string> nodes, reasons;
    for (size_t i = 0; i < floating.size(); ++i) {
      if (!floating[i]) continue;
      nodes.push_back(report.sensitivity[i].node);
      reasons.push_back(fmt::format(
          "accuracy fallback: quantized alone it brings the outputs to {:.1f} dB SQNR (target "
          "{:.1f} dB)",
          report.sensitivity[i].sqnr_db, options.min_sqnr_db));
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
    }
  }
  plan = plan_keeping(floating);
  for (size_t i = 0; i < floating.size(); ++i) {
    if (floating[i]) report.fallen_back.push_back(report.sensitivity[i].node);
  }
  return report;
}

}  // namespace qtune::quant
