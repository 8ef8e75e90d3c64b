#include "quant/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace qtune::quant {
namespace {

bool IsQuantizableOp(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul" || op == "Add";
}

std::string SiteFormat(const QuantSite& site) {
  if (site.config.format == QuantFormat::kInt8 && !site.config.symmetric &&
      site.kind == QuantSite::Kind::kActivation) {
    return "uint8";
  }
  std::string name = QuantFormatName(site.config.format);
  if (site.kind == QuantSite::Kind::kWeight && site.config.block_size > 0) {
    name += "b" + std::to_string(site.config.block_size);  // "int4b64"
  }
  if (site.kind == QuantSite::Kind::kWeight && site.weight_only) name = "w:" + name;
  return name;
}

// K of a Gemm/MatMul/Conv weight: its elements over its output channels (`axis`).
int64_t ReductionLength(const Tensor& w, const QuantizerConfig& config) {
  if (w.rank() == 0) return 1;
  int64_t channels = 1;
  if (config.axis && *config.axis >= 0 && *config.axis < static_cast<int>(w.rank())) {
    channels = w.sizes()[*config.axis];
  }
  if (config.block_size > 0 && w.rank() == 2 && config.axis) {
    channels = w.sizes()[1 - *config.axis];  // the axis is K; the other one is N
  }
  return w.num_elements() / std::max<int64_t>(channels, 1);
}

// Largest |w| of a float32 initializer; nullopt otherwise.
std::optional<float> InitializerAmax(const ir::Graph& graph, const std::string& name) {
  const ir::Value* v = graph.FindValue(name);
  if (v == nullptr || !v->is_initializer() || v->initializer().dtype() != DataType::kFloat32) {
    return std::nullopt;
  }
  float amax = 0.0f;
  for (float x : v->initializer().span<float>()) amax = std::max(amax, std::fabs(x));
  return amax;
}

// The nodes a site feeds: its consumers, or every reader when the list is empty.
std::vector<std::string> SiteNodes(const ir::Graph& graph, const QuantSite& site) {
  std::vector<std::string> out;
  if (!site.consumers.empty()) {
    for (const auto& [node, index] : site.consumers) out.push_back(node);
  } else if (const ir::Value* v = graph.FindValue(site.value)) {
    for (const ir::Use& use : v->uses()) out.push_back(use.node->name());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void AppendReason(std::string& reason, const std::string& more) {
  if (more.empty() || reason.find(more) != std::string::npos) return;
  if (!reason.empty()) reason += "; ";
  reason += more;
}

std::string FormatAmax(const std::optional<float>& v) {
  return v.has_value() ? fmt::format("{:.4g}", *v) : "-";
}

}  // namespace

QuantSummary BuildSummary(const ir::Graph& graph, const QuantPlan& plan,
                          const ExportReport* exported) {
  QuantSummary summary;
  summary.target = TargetName(plan.target);
  std::map<std::string, SummaryRow> rows;
  std::set<std::string> formats_seen;
  auto row_for = [&](const std::string& node_name) -> SummaryRow& {
    SummaryRow& row = rows[node_name];
    row.node = node_name;
    return row;
  };

  std::map<std::string, std::vector<const GuardHit*>> hits_by_site;
  for (const GuardHit& hit : plan.guard_hits) hits_by_site[hit.site].push_back(&hit);

  std::map<std::string, std::set<std::string>> formats;  // node -> formats
  for (const QuantSite& site : plan.sites) {
    const bool enabled = site.enabled && site.config.enable;
    (enabled ? summary.enabled_sites : summary.disabled_sites)++;
    for (const std::string& node_name : SiteNodes(graph, site)) {
      SummaryRow& row = row_for(node_name);
      if (enabled) {
        row.quantized = true;
        formats[node_name].insert(SiteFormat(site));
        if (site.kind == QuantSite::Kind::kWeight) {
          std::optional<float> amax = InitializerAmax(graph, site.value);
          if (amax.has_value()) row.weight_amax = std::max(row.weight_amax.value_or(0.0f), *amax);
          const ir::Value* w = graph.FindValue(site.value);
          if (w != nullptr && w->is_initializer()) {
            row.weight_bits =
                EffectiveBits(site.config, ReductionLength(w->initializer(), site.config));
          }
        } else if (site.range.has_value()) {
          row.input_amax = std::max(row.input_amax.value_or(0.0f), site.range->amax);
        }
      } else if (site.disabled_reason != kAccuracyFallbackReason) {  // the layer says why
        AppendReason(row.reason, fmt::format("quantizer on '{}' disabled: {}", site.value,
                                             site.disabled_reason.empty() ? "by the recipe"
                                                                          : site.disabled_reason));
      }
      for (const GuardHit* hit : hits_by_site[site.value]) {
        std::string text = hit->guard + (hit->detail.empty() ? "" : ": " + hit->detail);
        if (std::find(row.guard_hits.begin(), row.guard_hits.end(), text) == row.guard_hits.end()) {
          row.guard_hits.push_back(std::move(text));
        }
      }
    }
  }
  for (const SkippedLayer& skipped : plan.skipped)
    AppendReason(row_for(skipped.node).reason, skipped.reason);
  for (const std::string& node : plan.quantized_nodes) row_for(node);

  // Emit in graph order; nodes that are not in the graph (a stale plan) go last.
  std::vector<const ir::Node*> order;
  auto topo = graph.TopologicalOrder();
  for (const ir::Node* n : topo.ok() ? *topo : graph.nodes()) order.push_back(n);
  std::set<std::string> emitted;
  auto emit = [&](SummaryRow row, const std::string& op_type) {
    row.op_type = op_type;
    const auto& f = formats[row.node];
    row.format = row.quantized ? fmt::format("{}", fmt::join(f, "/")) : "-";
    if (!row.quantized && row.reason.empty()) row.reason = "no quantizer placed";
    (row.quantized ? summary.quantized_layers : summary.float_layers)++;
    summary.rows.push_back(std::move(row));
  };
  for (const ir::Node* node : order) {
    auto it = rows.find(node->name());
    if (it == rows.end()) {
      if (!IsQuantizableOp(node->op_type()) || node->name().empty()) continue;
      SummaryRow row;
      row.node = node->name();
      emit(std::move(row), node->op_type());
      emitted.insert(node->name());
      continue;
    }
    if (!emitted.insert(node->name()).second) continue;
    emit(it->second, node->op_type());
  }
  for (auto& [name, row] : rows) {
    if (emitted.count(name) == 0) emit(row, "?");
  }
  // Weight bits over every linear op's constant weight (float ones count 32).
  double bits = 0.0, elements = 0.0;
  for (const ir::Node* node : order) {
    const std::string& op = node->op_type();
    if (op != "Conv" && op != "ConvTranspose" && op != "Gemm" && op != "MatMul") continue;
    if (node->num_inputs() < 2 || node->input(1) == nullptr || !node->input(1)->is_initializer())
      continue;
    const double n = static_cast<double>(node->input(1)->initializer().num_elements());
    auto it = rows.find(node->name());
    const bool low = it != rows.end() && it->second.quantized && it->second.weight_bits;
    bits += n * (low ? *it->second.weight_bits : 32.0);
    elements += n;
  }
  if (elements > 0) summary.weight_effective_bits = bits / elements;
  if (exported != nullptr) {
    summary.opset_before = exported->opset_before;
    summary.opset_after = exported->opset_after;
    summary.warnings = exported->warnings;
  }
  return summary;
}

std::string SummaryToText(const QuantSummary& summary) {
  size_t node_width = 4;
  for (const SummaryRow& row : summary.rows) node_width = std::max(node_width, row.node.size());
  node_width = std::min<size_t>(node_width, 40);
  std::string out =
      fmt::format("{:<{}}  {:<18} {:<5} {:<9} {:>10} {:>10}  {}\n", "node", node_width, "op",
                  "quant", "format", "in amax", "w amax", "reason / guards");
  for (const SummaryRow& row : summary.rows) {
    std::string notes = row.reason;
    for (const std::string& hit : row.guard_hits) {
      // "name: detail"; the detail often repeats the disabled quantizer's reason.
      size_t colon = hit.find(": ");
      bool repeated =
          colon != std::string::npos && notes.find(hit.substr(colon + 2)) != std::string::npos;
      AppendReason(notes, "guard " + (repeated ? hit.substr(0, colon) : hit));
    }
    out += fmt::format("{:<{}}  {:<18} {:<5} {:<9} {:>10} {:>10}  {}\n", row.node, node_width,
                       row.op_type, row.quantized ? "yes" : "no", row.format,
                       FormatAmax(row.input_amax), FormatAmax(row.weight_amax), notes);
  }
  out += fmt::format(
      "{} layers quantized, {} in float; {} quantizers enabled, {} disabled; "
      "target {}",
      summary.quantized_layers, summary.float_layers, summary.enabled_sites, summary.disabled_sites,
      summary.target);
  if (summary.weight_effective_bits) {
    out += fmt::format("; {:.2f} bits per weight", *summary.weight_effective_bits);
  }
  if (summary.opset_after != 0 && summary.opset_after != summary.opset_before) {
    out += fmt::format("; opset {} -> {}", summary.opset_before, summary.opset_after);
  }
  out += "\n";
  if (summary.fallback.has_value()) {
    const FallbackReport& f = *summary.fallback;
    out += fmt::format(
        "accuracy fallback: SQNR against fp32 {:.1f} dB -> {:.1f} dB (target {:.1f} dB{}) of {} "
        "on {} calibration samples; {} layers kept in float\n",
        f.sqnr_before_db, f.sqnr_after_db, f.target_db, f.reached ? "" : ", NOT REACHED",
        fmt::join(f.measured, ", "), f.samples, f.fallen_back.size());
  }
  for (const std::string& w : summary.warnings) out += "warning: " + w + "\n";
  return out;
}

nlohmann::json SummaryToJson(const QuantSummary& summary) {
  nlohmann::json layers = nlohmann::json::array();
  for (const SummaryRow& row : summary.rows) {
    nlohmann::json j = {{"node", row.node},
                        {"op", row.op_type},
                        {"quantized", row.quantized},
                        {"format", row.quantized ? nlohmann::json(row.format) : nlohmann::json()},
                        {"input_amax", nullptr},
                        {"weight_amax", nullptr},
                        {"reason", row.reason},
                        {"guard_hits", row.guard_hits}};
    if (row.input_amax.has_value()) j["input_amax"] = *row.input_amax;
    if (row.weight_amax.has_value()) j["weight_amax"] = *row.weight_amax;
    j["weight_bits"] = row.weight_bits ? nlohmann::json(*row.weight_bits) : nlohmann::json();
    layers.push_back(std::move(j));
  }
  nlohmann::json out = {{"version", 1},
                        {"target", summary.target},
                        {"layers", std::move(layers)},
                        {"quantized_layers", summary.quantized_layers},
                        {"float_layers", summary.float_layers},
                        {"enabled_quantizers", summary.enabled_sites},
                        {"disabled_quantizers", summary.disabled_sites},
                        {"warnings", summary.warnings}};
  out["weight_effective_bits"] = summary.weight_effective_bits
                                     ? nlohmann::json(*summary.weight_effective_bits)
                                     : nlohmann::json();
  out["accuracy_fallback"] = nullptr;
  if (summary.fallback.has_value()) {
    const FallbackReport& f = *summary.fallback;
    nlohmann::json sensitivity = nlohmann::json::array();
    for (const LayerSensitivity& layer : f.sensitivity) {
      sensitivity.push_back(
          {{"node", layer.node}, {"op", layer.op_type}, {"sqnr_db", layer.sqnr_db}});
    }
    out["accuracy_fallback"] = {{"target_db", f.target_db},
                                {"sqnr_before_db", f.sqnr_before_db},
                                {"sqnr_after_db", f.sqnr_after_db},
                                {"reached", f.reached},
                                {"samples", f.samples},
                                {"measured", f.measured},
                                {"layers_in_float", f.fallen_back},
                                {"sensitivity", std::move(sensitivity)}};
  }
  if (summary.opset_after != 0) {
    out["opset_before"] = summary.opset_before;
    out["opset_after"] = summary.opset_after;
  }
  return out;
}

}  // namespace qtune::quant
