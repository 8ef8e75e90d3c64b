// ApplyGuards: dead quantizers (0, negative, NaN, inf, uncalibrated) are disabled with
// their scale group and their residual-add partner; Softmax outputs are pinned to [0, 1].
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "placement_test_util.h"

namespace qtune::quant {
namespace {

using namespace testing;  // NOLINT

QuantSite Activation(const std::string& value, const std::string& group, float amax,
                     std::pair<std::string, int> consumer, const std::string& role = "Conv input") {
  QuantSite site;
  site.value = value;
  site.scale_group = group;
  site.role = role;
  site.consumers = {consumer};
  site.range = TensorRange{-amax, amax, amax, 100};
  return site;
}

int Hits(const QuantPlan& plan, const std::string& guard) {
  int n = 0;
  for (const GuardHit& h : plan.guard_hits) n += h.guard == guard;
  return n;
}

TEST(GuardsTest, BadAmaxDisablesTheSiteAndItsScaleGroup) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  QuantPlan plan;
  plan.sites = {Activation("a", "g1", 0.0f, {"cat", 0}),  Activation("b", "g1", 2.0f, {"cat", 1}),
                Activation("c", "g1", 3.0f, {"head", 0}), Activation("d", "", -1.0f, {"x", 0}),
                Activation("e", "", nan, {"y", 0}),       Activation("f", "", inf, {"z", 0}),
                Activation("ok", "", 1.5f, {"w", 0})};
  QuantSite weight;
  weight.kind = QuantSite::Kind::kWeight;
  weight.value = "w";
  plan.sites.push_back(weight);  // weights have no range and are left alone
  ApplyGuards(plan);
  for (const char* dead : {"a", "b", "c", "d", "e", "f"}) {
    EXPECT_FALSE(SitesOn(plan, dead)[0]->enabled) << dead;
    EXPECT_FALSE(SitesOn(plan, dead)[0]->disabled_reason.empty()) << dead;
  }
  EXPECT_TRUE(SitesOn(plan, "ok")[0]->enabled);
  EXPECT_TRUE(SitesOn(plan, "w")[0]->enabled);
  EXPECT_EQ(Hits(plan, "dead_quantizer"), 6);
  EXPECT_NE(SitesOn(plan, "b")[0]->disabled_reason.find("scale group g1"), std::string::npos);
  // Idempotent.
  ApplyGuards(plan);
  EXPECT_EQ(Hits(plan, "dead_quantizer"), 6);
}

TEST(GuardsTest, UncalibratedSiteIsDisabled) {
  QuantPlan plan;
  plan.sites = {Activation("a", "", 1.0f, {"n", 0})};
  plan.sites[0].range.reset();
  ApplyGuards(plan);
  EXPECT_FALSE(plan.sites[0].enabled);
  EXPECT_EQ(Hits(plan, "dead_quantizer"), 1);
}

TEST(GuardsTest, DeadResidualAddInputDisablesItsPartner) {
  QuantPlan plan;
  plan.sites = {
      Activation("branch", "", std::numeric_limits<float>::infinity(), {"add", 0}, "residual add"),
      Activation("shortcut", "", 4.0f, {"add", 1}, "Conv input, residual add"),
      Activation("other", "", 4.0f, {"add2", 1}, "residual add")};
  ApplyGuards(plan);
  EXPECT_FALSE(plan.sites[0].enabled);
  EXPECT_FALSE(plan.sites[1].enabled);
  EXPECT_TRUE(plan.sites[2].enabled);
}

TEST(GuardsTest, DeadQuantizerOnARealPlan) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 16, 8, 8});
  ir::Value* p = Conv(b, x, "p", 16, 16);
  ir::Value* q = Conv(b, x, "q", 16, 16, 1);
  ir::Value* cat = b.Op("Concat", {p, q}, {ir::Attribute::Int("axis", 1)}, {.name = "cat"});
  b.Output(Conv(b, cat, "head", 32, 16));
  auto graph = b.Build();
  QuantPlan plan = PlanOrDie(*graph, Preset("int8"), Target::kCpu, {{"x", {1, 16, 8, 8}}});
  for (QuantSite& s : plan.sites) {
    if (s.kind == QuantSite::Kind::kActivation) s.range = TensorRange{-1, 1, 1, 10};
  }
  for (QuantSite& s : plan.sites) {
    if (s.value == "q_out") s.range->amax = 0.0f;  // e.g. a conv whose output is all zero
  }
  ApplyGuards(plan);
  EXPECT_FALSE(SiteFor(plan, "cat", 0)->enabled);
  EXPECT_FALSE(SiteFor(plan, "cat", 1)->enabled);
  EXPECT_FALSE(SiteFor(plan, "head", 0)->enabled);
  EXPECT_TRUE(SiteFor(plan, "p", 0)->enabled);  // x: not in the group
  EXPECT_EQ(Hits(plan, "dead_quantizer"), 3);
}

TEST(GuardsTest, SoftmaxOutputIsPinnedToZeroOne) {
  QuantPlan plan;
  plan.sites = {
      Activation("probs", "", 0.93f, {"bmm2", 0}, "attention MatMul input (Softmax output)")};
  ApplyGuards(plan);
  ASSERT_TRUE(plan.sites[0].enabled);
  EXPECT_EQ(plan.sites[0].range->amax, 1.0f);
  EXPECT_EQ(plan.sites[0].range->min, 0.0f);
  EXPECT_EQ(Hits(plan, "softmax_fixed_range"), 1);
  ApplyGuards(plan);
  EXPECT_EQ(Hits(plan, "softmax_fixed_range"), 1);
}

}  // namespace
}  // namespace qtune::quant
