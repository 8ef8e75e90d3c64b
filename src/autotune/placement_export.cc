#include "autotune/placement_export.h"

#include <fmt/format.h>

#include <cmath>

#include "core/sha256.h"
#include "measure/planned_model.h"
#include "quant/placement_rules.h"

namespace qtune::autotune {
namespace {

bool IsLinear(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

bool UsableRange(const quant::TensorRange& range) {
  return std::isfinite(range.amax) && range.amax > 0 && std::isfinite(range.min) &&
         std::isfinite(range.max);
}

}  // namespace

std::string PlacementHash(const Placement& placement) {
  std::string text;
  for (const ResolvedPoint& p : placement) text += fmt::format("{}\t{}\n", p.node, p.input_index);
  return Sha256Hex(text).substr(0, 16);
}

Placement PlacementOfPlan(const quant::QuantPlan& plan) {
  Placement placement;
  for (const quant::QuantSite& site : plan.sites) {
    if (!site.enabled || site.kind != quant::QuantSite::Kind::kActivation) continue;
    for (const auto& [node, input] : site.consumers) {
      placement.insert(ResolvedPoint{node, input, site.value});
    }
  }
  return placement;
}

std::string CompiledPlanKey(const runtime::Plan& plan) {
  std::string key;
  auto describe_value = [&](int id) {
    if (id < 0) return std::string("-");
    const runtime::PlanValue& v = plan.values[static_cast<size_t>(id)];
    std::string sizes;
    for (int64_t s : v.sizes) sizes += fmt::format("{}x", s);
    return fmt::format("{}:{}:{}", static_cast<int>(v.dtype), sizes, static_cast<int>(v.layout));
  };
  for (const runtime::PlanStep& step : plan.steps) {
    key += step.op_type + "|" + (step.kernel ? step.kernel->Describe() : std::string("none"));
    for (int id : step.inputs) key += " " + describe_value(id);
    key += " ->";
    for (int id : step.outputs) key += " " + describe_value(id);
    key += "\n";
  }
  return Sha256Hex(key).substr(0, 16);
}

bool PlacementExporter::Quantizable(const ResolvedPoint& point) const {
  auto it = in_.ranges.find(point.tensor);
  return it != in_.ranges.end() && UsableRange(it->second);
}

quant::QuantPlan PlacementExporter::PlanFor(const Placement& placement) const {
  std::map<std::string, const quant::QuantSite*> rule_activation;  // tensor -> site
  std::map<std::string, const quant::QuantSite*> rule_weight;      // layer -> weight site
  for (const quant::QuantSite& site : in_.rule_plan.sites) {
    if (site.kind == quant::QuantSite::Kind::kActivation) {
      rule_activation.emplace(site.value, &site);
    } else if (!site.consumers.empty()) {
      rule_weight.emplace(site.consumers.front().first, &site);
    }
  }

  quant::QuantPlan plan;
  plan.target = in_.target;
  std::map<std::string, size_t> activation_index;  // tensor -> index in plan.sites
  std::set<std::string> weighted_layers;
  for (const ResolvedPoint& point : placement) {
    if (!Quantizable(point)) continue;
    auto [it, inserted] = activation_index.emplace(point.tensor, plan.sites.size());
    if (inserted) {
      quant::QuantSite site;
      auto rule = rule_activation.find(point.tensor);
      if (rule != rule_activation.end()) {
        site.config = rule->second->config;
        site.scale_group = rule->second->scale_group;
        site.role = rule->second->role;
      } else {
        site.config = in_.activation_config;
        site.role = "autotune";
      }
      site.config.enable = true;
      site.value = point.tensor;
      site.range = in_.ranges.at(point.tensor);
      plan.sites.push_back(std::move(site));
    }
    plan.sites[it->second].consumers.emplace_back(point.node, point.input_index);

    const ir::Node* reader = in_.float_graph->FindNode(point.node);
    if (reader == nullptr || !IsLinear(reader->op_type()) || point.input_index != 0) continue;
    if (!weighted_layers.insert(point.node).second) continue;
    auto rule = rule_weight.find(point.node);
    if (rule != rule_weight.end()) {
      quant::QuantSite weight = *rule->second;
      weight.enabled = true;
      weight.disabled_reason.clear();
      plan.sites.push_back(std::move(weight));
      continue;
    }
    quant::LayerContext context{in_.infos, in_.target, in_.activation_config.format};
    quant::LayerDecision decision = quant::DecideLayer(*reader, context);
    if (!decision.weight_axis.has_value() || reader->num_inputs() < 2) continue;
    quant::QuantSite weight;
    weight.kind = quant::QuantSite::Kind::kWeight;
    weight.value = reader->input(1)->name();
    weight.consumers.emplace_back(point.node, 1);
    weight.config = in_.activation_config;
    weight.config.symmetric = true;
    weight.config.axis = decision.weight_axis;
    weight.role = "autotune weight";
    plan.sites.push_back(std::move(weight));
  }
  return plan;
}

StatusOr<std::unique_ptr<ir::Graph>> PlacementExporter::Export(const Placement& placement) const {
  auto graph = measure::ExportPlannedModel(*in_.float_graph, PlanFor(placement));
  if (!graph.ok()) return graph.status().WithContext("autotune: exporting a candidate placement");
  return graph;
}

}  // namespace qtune::autotune
