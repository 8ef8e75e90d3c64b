// QuantPlan <-> JSON: every field round-trips bit-exactly; bad fields are named.
#include "quant/plan_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace qtune::quant {
namespace {

using ::testing::HasSubstr;

QuantPlan FullPlan() {
  QuantPlan plan;
  plan.target = Target::kTrt;
  QuantSite act;
  act.value = "conv1_out";
  act.consumers = {{"conv2", 0}, {"add1", 1}};
  act.config.symmetric = false;
  act.config.calibrator = {CalibratorKind::kPercentile, 99.9, 1024};
  act.role = "Conv input";
  act.scale_group = "concat_0";
  act.range = TensorRange{-0.1f, 3.3333333f, 2.9999998f, 12345};
  QuantSite weight;
  weight.kind = QuantSite::Kind::kWeight;
  weight.value = "conv2.weight";
  weight.consumers = {{"conv2", 1}};
  weight.config.format = QuantFormat::kFp8E4M3;
  weight.config.axis = 0;
  weight.config.enable = false;
  weight.enabled = false;
  weight.disabled_reason = "dead_quantizer";
  plan.sites = {act, weight};
  plan.skipped = {{"fc", "Gemm", "GEMV shape (M = 1)"}};
  plan.guard_hits = {{"dead_quantizer", "conv2.weight", "all zero"}};
  plan.quantized_nodes = {"conv2", "add1"};
  return plan;
}

void ExpectSameSite(const QuantSite& a, const QuantSite& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.consumers, b.consumers);
  EXPECT_EQ(a.config.enable, b.config.enable);
  EXPECT_EQ(a.config.format, b.config.format);
  EXPECT_EQ(a.config.bits, b.config.bits);
  EXPECT_EQ(a.config.axis, b.config.axis);
  EXPECT_EQ(a.config.symmetric, b.config.symmetric);
  EXPECT_EQ(a.config.calibrator.kind, b.config.calibrator.kind);
  EXPECT_EQ(a.config.calibrator.percentile, b.config.calibrator.percentile);
  EXPECT_EQ(a.config.calibrator.bins, b.config.calibrator.bins);
  EXPECT_EQ(a.role, b.role);
  EXPECT_EQ(a.scale_group, b.scale_group);
  EXPECT_EQ(a.enabled, b.enabled);
  EXPECT_EQ(a.disabled_reason, b.disabled_reason);
  ASSERT_EQ(a.range.has_value(), b.range.has_value());
  if (a.range.has_value()) {
    // Bit-exact floats: the scales exported from a loaded plan equal the tuned ones.
    EXPECT_EQ(std::memcmp(&a.range->min, &b.range->min, sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(&a.range->max, &b.range->max, sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(&a.range->amax, &b.range->amax, sizeof(float)), 0);
    EXPECT_EQ(a.range->samples, b.range->samples);
  }
}

TEST(PlanJsonTest, EveryFieldRoundTripsThroughText) {
  QuantPlan plan = FullPlan();
  auto loaded = ParsePlanJson(PlanToJsonText(plan), "test");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->target, plan.target);
  ASSERT_EQ(loaded->sites.size(), plan.sites.size());
  for (size_t i = 0; i < plan.sites.size(); ++i) ExpectSameSite(loaded->sites[i], plan.sites[i]);
  ASSERT_EQ(loaded->skipped.size(), 1u);
  EXPECT_EQ(loaded->skipped[0].node, "fc");
  EXPECT_EQ(loaded->skipped[0].op_type, "Gemm");
  EXPECT_EQ(loaded->skipped[0].reason, "GEMV shape (M = 1)");
  ASSERT_EQ(loaded->guard_hits.size(), 1u);
  EXPECT_EQ(loaded->guard_hits[0].detail, "all zero");
  EXPECT_EQ(loaded->quantized_nodes, plan.quantized_nodes);
  EXPECT_EQ(PlanToJsonText(*loaded), PlanToJsonText(plan));
}

TEST(PlanJsonTest, NonFiniteRangeValuesRoundTrip) {
  QuantPlan plan = FullPlan();
  plan.sites[0].range =
      TensorRange{-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), 1};
  auto loaded = ParsePlanJson(PlanToJsonText(plan), "test");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(std::isinf(loaded->sites[0].range->min) && loaded->sites[0].range->min < 0);
  EXPECT_TRUE(std::isinf(loaded->sites[0].range->max) && loaded->sites[0].range->max > 0);
  EXPECT_TRUE(std::isnan(loaded->sites[0].range->amax));
}

TEST(PlanJsonTest, MissingFieldIsNamedWithItsPath) {
  nlohmann::json j = PlanToJson(FullPlan());
  j["sites"][1]["config"].erase("axis");
  auto loaded = PlanFromJson(j, "'x.qtc' plan.json");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("'x.qtc' plan.json"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("sites[1].config.axis"));
}

TEST(PlanJsonTest, MistypedFieldIsNamed) {
  nlohmann::json j = PlanToJson(FullPlan());
  j["sites"][0]["range"]["amax"] = "big";
  auto loaded = PlanFromJson(j, "p");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("sites[0].range.amax"));
  j = PlanToJson(FullPlan());
  j["sites"][0]["consumers"][1] = {"add1"};
  loaded = PlanFromJson(j, "p");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("sites[0].consumers[1]"));
}

TEST(PlanJsonTest, UnknownEnumValuesAreNamed) {
  nlohmann::json j = PlanToJson(FullPlan());
  j["sites"][0]["config"]["calibrator"]["kind"] = "magic";
  auto loaded = PlanFromJson(j, "p");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("sites[0].config.calibrator.kind"));
  j = PlanToJson(FullPlan());
  j["target"] = "gpu";
  loaded = PlanFromJson(j, "p");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("'target'"));
}

TEST(PlanJsonTest, NewerVersionIsUnimplementedNamingBoth) {
  nlohmann::json j = PlanToJson(FullPlan());
  j["version"] = kPlanJsonVersion + 1;
  auto loaded = PlanFromJson(j, "p");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(loaded.status().message(), HasSubstr(std::to_string(kPlanJsonVersion + 1)));
}

TEST(PlanJsonTest, TextThatIsNotJsonIsDataLoss) {
  auto loaded = ParsePlanJson("{not json", "p");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace qtune::quant
