// ApplyGuards (placement.h): post-calibration sanity checks on the plan's activation sites.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "quant/placement.h"

namespace qtune::quant {
namespace {

bool HasRole(const QuantSite& site, const std::string& role) {
  return site.role.find(role) != std::string::npos;
}

bool SharesResidualAdd(const QuantSite& a, const QuantSite& b) {
  if (!HasRole(a, "residual add") || !HasRole(b, "residual add")) return false;
  for (const auto& [node_a, index_a] : a.consumers) {
    for (const auto& [node_b, index_b] : b.consumers) {
      if (node_a == node_b && index_a != index_b) return true;
    }
  }
  return false;
}

std::string Number(float v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", static_cast<double>(v));
  return buffer;
}

}  // namespace

void ApplyGuards(QuantPlan& plan) {
  // Softmax outputs are probabilities: pin the range instead of trusting the data.
  for (QuantSite& site : plan.sites) {
    if (!site.enabled || !site.range || !HasRole(site, "Softmax output")) continue;
    TensorRange& r = *site.range;
    if (r.min == 0.0f && r.max == 1.0f && r.amax == 1.0f) continue;
    plan.guard_hits.push_back({"softmax_fixed_range", site.value,
                               "range [" + Number(r.min) + ", " + Number(r.max) + "] amax " +
                                   Number(r.amax) + " pinned to [0, 1]"});
    r.min = 0.0f;
    r.max = 1.0f;
    r.amax = 1.0f;
  }
  // Dead quantizers: a scale of 0, a negative, NaN or infinite one breaks export (scale =
  // amax / qmax) and every runtime.
  std::vector<size_t> dead;
  for (size_t i = 0; i < plan.sites.size(); ++i) {
    QuantSite& site = plan.sites[i];
    if (!site.enabled || site.kind != QuantSite::Kind::kActivation) continue;
    if (!site.range) {
      site.enabled = false;
      site.disabled_reason = "never calibrated (no range)";
      plan.guard_hits.push_back({"dead_quantizer", site.value, site.disabled_reason});
      dead.push_back(i);
      continue;
    }
    const float amax = site.range->amax;
    if (std::isfinite(amax) && amax > 0.0f) continue;
    site.enabled = false;
    site.disabled_reason = "calibrated amax " + Number(amax) + " is not a positive finite number";
    plan.guard_hits.push_back({"dead_quantizer", site.value, site.disabled_reason});
    dead.push_back(i);
  }
  // What shares a scale with a dead site (its scale group), or forms one int8 Add with it,
  // goes too: half of a group cannot run in 8 bits.
  while (!dead.empty()) {
    const QuantSite source = plan.sites[dead.back()];
    dead.pop_back();
    for (size_t j = 0; j < plan.sites.size(); ++j) {
      QuantSite& other = plan.sites[j];
      if (!other.enabled || other.kind != QuantSite::Kind::kActivation) continue;
      bool same_group = !source.scale_group.empty() && other.scale_group == source.scale_group;
      if (!same_group && !SharesResidualAdd(source, other)) continue;
      other.enabled = false;
      other.disabled_reason = (same_group ? "shares scale group " + source.scale_group
                                          : std::string("forms a residual add")) +
                              " with dead quantizer on '" + source.value + "'";
      plan.guard_hits.push_back({"dead_quantizer", other.value, other.disabled_reason});
      dead.push_back(j);
    }
  }
}

}  // namespace qtune::quant
