// Small graph-building and plan-query helpers for the placement tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/builder.h"
#include "quant/placement.h"

namespace qtune::quant::testing {

// A float32 initializer with deterministic non-zero values.
inline ir::Value* Weights(ir::GraphBuilder& b, const std::string& name,
                          const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = 0.01f * static_cast<float>((i * 7) % 13 - 6);
  return b.Initializer(name, Tensor::FromVector<float>(sizes, values));
}

// Conv named `name` with a k x k kernel, "same" padding, weight "<name>_w".
inline ir::Value* Conv(ir::GraphBuilder& b, ir::Value* x, const std::string& name, int64_t in,
                       int64_t out, int64_t k = 3, int64_t group = 1, int64_t stride = 1) {
  ir::Value* w = Weights(b, name + "_w", {out, in / group, k, k});
  int64_t p = k / 2;
  return b.Op(
      "Conv", {x, w},
      {ir::Attribute::Ints("kernel_shape", {k, k}), ir::Attribute::Ints("pads", {p, p, p, p}),
       ir::Attribute::Ints("strides", {stride, stride}), ir::Attribute::Int("group", group)},
      {.name = name});
}

inline ir::Value* Relu(ir::GraphBuilder& b, ir::Value* x, const std::string& name) {
  return b.Op("Relu", {x}, {}, {.name = name});
}

inline ir::Value* Add(ir::GraphBuilder& b, ir::Value* x, ir::Value* y, const std::string& name) {
  return b.Op("Add", {x, y}, {}, {.name = name});
}

// The sites that quantize `value` (enabled or not).
inline std::vector<const QuantSite*> SitesOn(const QuantPlan& plan, const std::string& value) {
  std::vector<const QuantSite*> out;
  for (const QuantSite& s : plan.sites) {
    if (s.value == value) out.push_back(&s);
  }
  return out;
}

// The site that feeds input `index` of node `node`, or nullptr.
inline const QuantSite* SiteFor(const QuantPlan& plan, const std::string& node, int index) {
  for (const QuantSite& s : plan.sites) {
    for (const auto& [n, i] : s.consumers) {
      if (n == node && i == index) return &s;
    }
  }
  return nullptr;
}

inline const SkippedLayer* Skipped(const QuantPlan& plan, const std::string& node) {
  for (const SkippedLayer& s : plan.skipped) {
    if (s.node == node) return &s;
  }
  return nullptr;
}

inline int CountRole(const QuantPlan& plan, const std::string& role) {
  int n = 0;
  for (const QuantSite& s : plan.sites) n += s.role.find(role) != std::string::npos;
  return n;
}

inline Recipe Preset(const std::string& name) {
  StatusOr<Recipe> recipe = LoadRecipe(name);
  EXPECT_TRUE(recipe.ok()) << recipe.status().ToString();
  return recipe.ok() ? *recipe : Recipe{};
}

inline QuantPlan PlanOrDie(const ir::Graph& graph, const Recipe& recipe, Target target,
                           const InputSizes& sizes) {
  StatusOr<QuantPlan> plan = PlanQuantization(graph, recipe, target, sizes);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? *plan : QuantPlan{};
}

}  // namespace qtune::quant::testing
