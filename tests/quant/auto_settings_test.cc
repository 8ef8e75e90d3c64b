// The recipe's `auto:` block (each key, unknown keys, bad values) and how it meets the
// --auto flags (auto_settings.h): the recipe is authoritative, a contradiction is an error.
#include "quant/auto_settings.h"

#include <gtest/gtest.h>

#include "quant/auto_quantize.h"
#include "quant/recipe.h"

namespace qtune::quant {
namespace {

Recipe Parse(const std::string& yaml) {
  auto recipe = ParseRecipe(yaml, "auto.yaml");
  EXPECT_TRUE(recipe.ok()) << recipe.status().ToString();
  return recipe.ok() ? *recipe : Recipe{};
}

std::string ParseError(const std::string& yaml) {
  auto recipe = ParseRecipe(yaml, "auto.yaml");
  EXPECT_FALSE(recipe.ok());
  return recipe.ok() ? "" : recipe.status().ToString();
}

TEST(AutoRecipe, EveryKeyIsRead) {
  Recipe r = Parse(R"(
auto:
  candidate_formats: [int8, fp8, bf16, fp32]
  score_size: 16
  cost_excluded_layers: ["head*", "stem"]
  effective_bits: 12.5
)");
  ASSERT_TRUE(r.auto_search);
  EXPECT_EQ(*r.auto_search->candidate_formats,
            (std::vector<std::string>{"int8", "fp8", "bf16", "fp32"}));
  EXPECT_EQ(r.auto_search->score_size, 16);
  EXPECT_EQ(*r.auto_search->cost_excluded_layers, (std::vector<std::string>{"head*", "stem"}));
  EXPECT_EQ(r.auto_search->effective_bits, 12.5);
  EXPECT_FALSE(r.auto_search->min_sqnr_db);
  Recipe s = Parse("auto: {candidate_formats: 'int8, fp32', min_sqnr_db: 40}\n");
  ASSERT_TRUE(s.auto_search);
  EXPECT_EQ(*s.auto_search->candidate_formats, (std::vector<std::string>{"int8", "fp32"}));
  EXPECT_EQ(s.auto_search->min_sqnr_db, 40);
  EXPECT_FALSE(Parse("calibrator: max\n").auto_search);
}

TEST(AutoRecipe, LatencyKeys) {
  Recipe r = Parse("auto: {latency_budget_ms: 25.5}\n");
  ASSERT_TRUE(r.auto_search);
  EXPECT_EQ(r.auto_search->latency_budget_ms, 25.5);
  Recipe c = Parse("auto: {min_sqnr_db: 45, cost_model: latency}\n");
  ASSERT_TRUE(c.auto_search);
  EXPECT_EQ(c.auto_search->cost_model, "latency");
  EXPECT_NE(ParseError("auto: {cost_model: flops}\n").find("use weight or latency"),
            std::string::npos);
  EXPECT_NE(ParseError("auto: {latency_budget_ms: 0}\n").find("must be positive"),
            std::string::npos);
  EXPECT_NE(ParseError("auto: {latency_budget_ms: 9, min_sqnr_db: 30}\n").find("one objective"),
            std::string::npos);
}

TEST(AutoRecipe, BadKeysAndValuesAreErrorsWithTheirLine) {
  EXPECT_NE(ParseError("auto:\n  budget: 12\n").find("unknown key 'budget'"), std::string::npos);
  EXPECT_NE(ParseError("auto:\n  candidate_formats: [int4]\n").find("'int4' is not a format"),
            std::string::npos);
  EXPECT_NE(ParseError("auto:\n  score_size: 0\n").find("at least 1"), std::string::npos);
  EXPECT_NE(ParseError("auto:\n  effective_bits: 3.5\n").find("[4, 32]"), std::string::npos);
  EXPECT_NE(ParseError("auto:\n  effective_bits: 9\n  min_sqnr_db: 30\n").find("one objective"),
            std::string::npos);
  EXPECT_NE(ParseError("auto: 12\n").find("must be a mapping"), std::string::npos);
  EXPECT_NE(ParseError("auto:\n  cost_excluded_layers: []\n").find("must not be empty"),
            std::string::npos);
  EXPECT_NE(ParseError("auto:\n  score_size: 0\n").find("auto.yaml:2"), std::string::npos);
}

StatusOr<std::optional<AutoSettings>> Resolve(const Recipe& recipe, bool cli_auto,
                                              const AutoSettings& cli) {
  return ResolveAutoSettings(recipe, cli_auto, cli, std::nullopt);
}

TEST(AutoResolve, FlagsFillWhatTheRecipeLeavesOpen) {
  Recipe r = Parse("auto: {score_size: 4}\n");
  AutoSettings cli;
  cli.effective_bits = 10;
  cli.cost_excluded_layers = std::vector<std::string>{"fc"};
  auto s = Resolve(r, /*cli_auto=*/false, cli);  // the block alone turns auto mode on
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE(s->has_value());
  EXPECT_EQ((*s)->score_size, 4);
  EXPECT_EQ((*s)->effective_bits, 10);
  EXPECT_EQ(*(*s)->cost_excluded_layers, std::vector<std::string>{"fc"});
  // Defaults for qtune's engine.
  EXPECT_EQ(*(*s)->candidate_formats, (std::vector<std::string>{"int8", "bf16", "fp32"}));
  auto trt = ResolveAutoSettings(r, false, cli, Target::kTrt);
  ASSERT_TRUE(trt.ok());
  EXPECT_EQ(*(*trt)->candidate_formats, (std::vector<std::string>{"int8", "fp8", "fp32"}));
  auto off = Resolve(Parse("calibrator: max\n"), false, AutoSettings{});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->has_value());
}

TEST(AutoResolve, AFlagContradictingTheRecipeIsAnError) {
  Recipe r = Parse(R"(
auto:
  candidate_formats: [int8, fp32]
  score_size: 8
  cost_excluded_layers: [head]
  effective_bits: 12
)");
  auto message = [&](AutoSettings cli) {
    auto s = Resolve(r, true, cli);
    EXPECT_FALSE(s.ok());
    return s.ok() ? "" : s.status().ToString();
  };
  AutoSettings formats;
  formats.candidate_formats = std::vector<std::string>{"int8", "bf16"};
  EXPECT_NE(message(formats).find("--candidate-formats int8,bf16 contradicts recipe"),
            std::string::npos);
  AutoSettings size;
  size.score_size = 32;
  EXPECT_NE(message(size).find("auto.score_size: 8"), std::string::npos);
  AutoSettings excluded;
  excluded.cost_excluded_layers = std::vector<std::string>{"stem"};
  EXPECT_NE(message(excluded).find("auto.cost_excluded_layers"), std::string::npos);
  AutoSettings bits;
  bits.effective_bits = 16;
  EXPECT_NE(message(bits).find("--effective-bits 16 contradicts"), std::string::npos);
  AutoSettings sqnr;
  sqnr.min_sqnr_db = 30;  // a second objective of another kind
  EXPECT_NE(message(sqnr).find("--min-sqnr contradicts"), std::string::npos);
  // Agreeing values are fine.
  AutoSettings same;
  same.score_size = 8;
  same.effective_bits = 12;
  EXPECT_TRUE(Resolve(r, true, same).ok());
}

TEST(AutoResolve, UsageErrors) {
  Recipe plain = Parse("calibrator: max\n");
  AutoSettings none;
  EXPECT_NE(Resolve(plain, true, none).status().ToString().find("needs an objective"),
            std::string::npos);
  AutoSettings both;
  both.effective_bits = 12;
  both.min_sqnr_db = 30;
  EXPECT_NE(Resolve(plain, true, both).status().ToString().find("one objective"),
            std::string::npos);
  AutoSettings without_auto;
  without_auto.effective_bits = 12;
  EXPECT_NE(Resolve(plain, false, without_auto).status().ToString().find("add --auto"),
            std::string::npos);
  AutoSettings bad_format;
  bad_format.effective_bits = 12;
  bad_format.candidate_formats = std::vector<std::string>{"int5"};
  const std::string unknown = Resolve(plain, true, bad_format).status().ToString();
  EXPECT_NE(unknown.find("'int5' is not a format; use int4, nvfp4, int8, fp8, mxfp8, bf16, fp32"),
            std::string::npos)
      << unknown;
  Recipe fallback = Parse("accuracy_fallback: {min_sqnr_db: 40}\n");
  AutoSettings bits;
  bits.effective_bits = 12;
  EXPECT_NE(Resolve(fallback, true, bits).status().ToString().find("accuracy_fallback block"),
            std::string::npos);
  EXPECT_NE(
      ResolveAutoSettings(plain, true, bits, Target::kOrt).status().ToString().find("--target ort"),
      std::string::npos);
}

TEST(AutoResolve, LatencyObjectiveAndCostModel) {
  Recipe plain = Parse("calibrator: max\n");
  AutoSettings budget;
  budget.latency_budget_ms = 20;
  auto s = Resolve(plain, true, budget);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto o = MakeAutoOptions(**s);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->cost_model, AutoCostModel::kLatency) << "a time budget costs in time";
  AutoSettings bits_latency;
  bits_latency.effective_bits = 12;
  bits_latency.cost_model = "latency";
  EXPECT_NE(Resolve(plain, true, bits_latency).status().ToString().find("--cost-model latency"),
            std::string::npos);
  Recipe r = Parse("auto: {latency_budget_ms: 20, cost_model: latency}\n");
  AutoSettings other;
  other.min_sqnr_db = 40;
  EXPECT_NE(Resolve(r, true, other)
                .status()
                .ToString()
                .find("--min-sqnr contradicts recipe 'auto.yaml' (auto.latency_budget_ms)"),
            std::string::npos);
  AutoSettings model;
  model.cost_model = "weight";
  EXPECT_NE(Resolve(r, true, model).status().ToString().find("auto.cost_model: latency"),
            std::string::npos);
  AutoSettings flags_only;
  flags_only.latency_budget_ms = 5;
  EXPECT_NE(Resolve(plain, false, flags_only).status().ToString().find("add --auto"),
            std::string::npos);
}

TEST(AutoResolve, OptionsFromSettings) {
  AutoSettings s;
  s.candidate_formats = std::vector<std::string>{"fp32", "int8"};
  s.score_size = 3;
  s.min_sqnr_db = 35;
  auto o = MakeAutoOptions(s);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->candidate_formats, (std::vector<AutoFormat>{AutoFormat::kFp32, AutoFormat::kInt8}));
  EXPECT_EQ(o->score_size, 3);
  EXPECT_EQ(o->min_sqnr_db, 35);
  EXPECT_FALSE(o->effective_bits);
}

}  // namespace
}  // namespace qtune::quant
