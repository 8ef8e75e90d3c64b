// Recipe loading: presets, composition (imports, $import dict merge and list splice),
// later-wins resolution, CLI overrides, and every error kind with file and line.
#include "quant/recipe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace qtune::quant {
namespace {

namespace fs = std::filesystem;

class RecipeFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("qtune_recipe_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  // Loads `path` and returns the error message (fails the test if it loads).
  std::string ErrorOf(const std::string& path) {
    StatusOr<Recipe> recipe = LoadRecipe(path);
    EXPECT_FALSE(recipe.ok()) << path << " loaded but should not";
    return recipe.ok() ? "" : recipe.status().message();
  }
  fs::path dir_;
};

TEST(RecipePresetTest, EveryPresetLoads) {
  std::vector<std::string> names = PresetNames();
  ASSERT_GE(names.size(), 8u);
  for (const char* name : {"int8", "fp8", "int4", "int4_awq", "int8_weight_only"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  for (const std::string& name : names) {
    StatusOr<Recipe> recipe = LoadRecipe(name);
    ASSERT_TRUE(recipe.ok()) << name << ": " << recipe.status().ToString();
    EXPECT_FALSE(recipe->quantizers.empty()) << name;
    EXPECT_FALSE(recipe->target.has_value()) << name << " must leave --target open";
    EXPECT_FALSE(recipe->calibrator.has_value()) << name << " must leave --calibrator open";
  }
}

TEST(RecipePresetTest, ResidualPresetsImportTheirBase) {
  StatusOr<Recipe> int8 = LoadRecipe("int8");
  StatusOr<Recipe> residual = LoadRecipe("int8_residual");
  ASSERT_TRUE(int8.ok() && residual.ok());
  EXPECT_FALSE(int8->residual_add_quantizers);
  EXPECT_TRUE(residual->residual_add_quantizers);
  ASSERT_EQ(residual->quantizers.size(), int8->quantizers.size());
  EXPECT_EQ(residual->quantizers[1].name_glob, "*weight_quantizer");
  EXPECT_NE(residual->quantizers[1].origin.find("<preset int8>:"), std::string::npos);
}

TEST(RecipePresetTest, Int8WeightsPerChannelActivationsPerTensor) {
  StatusOr<Recipe> recipe = LoadRecipe("int8");
  ASSERT_TRUE(recipe.ok());
  auto weight = ResolveQuantizer(*recipe, "conv1/weight_quantizer", "Conv", 0);
  auto input = ResolveQuantizer(*recipe, "conv1/input_quantizer", "Conv", std::nullopt);
  ASSERT_TRUE(weight && input);
  EXPECT_EQ(weight->config.axis, 0);
  EXPECT_EQ(input->config.axis, std::nullopt);
  EXPECT_EQ(input->config.format, QuantFormat::kInt8);
  auto fp8 = LoadRecipe("fp8");
  ASSERT_TRUE(fp8.ok());
  auto fp8_weight = ResolveQuantizer(*fp8, "conv1/weight_quantizer", "Conv", 0);
  ASSERT_TRUE(fp8_weight);
  EXPECT_EQ(fp8_weight->config.format, QuantFormat::kFp8E4M3);
  EXPECT_EQ(fp8_weight->config.axis, std::nullopt);  // per tensor
}

TEST(RecipeResolveTest, LaterEntriesWinAndEnableFalseRemoves) {
  StatusOr<Recipe> recipe = ParseRecipe(R"(
calibrator: entropy
quantizers:
  - name: "*"
    format: int8
  - name: "head/*"
    enable: false
  - name: "*"
    op: "Gemm"
    calibrator: percentile
    percentile: 99.9
  - name: "head/weight_quantizer"
    enable: true
)",
                                        "inline.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  EXPECT_EQ(recipe->calibrator->kind, CalibratorKind::kEntropy);
  EXPECT_FALSE(ResolveQuantizer(*recipe, "head/input_quantizer", "Conv", std::nullopt));
  auto head_weight = ResolveQuantizer(*recipe, "head/weight_quantizer", "Conv", 0);
  ASSERT_TRUE(head_weight);
  EXPECT_EQ(head_weight->origin, "inline.yaml:12");
  auto gemm = ResolveQuantizer(*recipe, "fc/input_quantizer", "Gemm", std::nullopt);
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->config.calibrator.kind, CalibratorKind::kPercentile);
  EXPECT_DOUBLE_EQ(gemm->config.calibrator.percentile, 99.9);
  auto conv = ResolveQuantizer(*recipe, "conv/input_quantizer", "Conv", std::nullopt);
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->config.calibrator.kind, CalibratorKind::kEntropy);  // the recipe default
}

TEST_F(RecipeFiles, DictMergeListSpliceAndEntrySnippets) {
  Write("base.yaml", R"(
calibrator: max
target: cpu
quantizers:
  - name: "*"
    format: int8
  - name: "*weight_quantizer"
    axis: channel
)");
  Write("extra_list.yaml", R"(imports:
  fp8cfg: fp8_entry.yaml
---
- name: "*fc*"
  enable: false
- name: "*attn*"
  $import: fp8cfg
)");
  Write("fp8_entry.yaml", "format: fp8_e4m3\naxis: null\n");
  std::string path = Write("child.yaml", R"(
imports:
  base: base.yaml
  extra: extra_list.yaml
  fp8cfg: fp8_entry.yaml
$import: base
calibrator: {method: percentile, percentile: 99.5}
quantizers:
  - $import: base
  - $import: extra
  - name: "stem/*"
    $import: fp8cfg
    axis: 0
)");
  StatusOr<Recipe> recipe = LoadRecipe(path);
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  EXPECT_EQ(recipe->target, Target::kCpu);  // from base, not overridden
  ASSERT_TRUE(recipe->calibrator);
  EXPECT_EQ(recipe->calibrator->kind, CalibratorKind::kPercentile);  // inline override
  EXPECT_DOUBLE_EQ(recipe->calibrator->percentile, 99.5);
  ASSERT_EQ(recipe->quantizers.size(), 5u);  // 2 from base + 2 spliced + 1 inline
  EXPECT_EQ(recipe->quantizers[2].name_glob, "*fc*");
  EXPECT_EQ(recipe->quantizers[3].format, QuantFormat::kFp8E4M3);
  EXPECT_EQ(recipe->quantizers[4].format, QuantFormat::kFp8E4M3);  // merged from the snippet
  ASSERT_TRUE(recipe->quantizers[4].axis);
  EXPECT_EQ(recipe->quantizers[4].axis->kind, AxisSetting::Kind::kExplicit);  // inline wins
  EXPECT_FALSE(ResolveQuantizer(*recipe, "fc/input_quantizer", "Gemm", std::nullopt));
  auto attn = ResolveQuantizer(*recipe, "attn_q/weight_quantizer", "MatMul", 1);
  ASSERT_TRUE(attn);
  EXPECT_EQ(attn->config.format, QuantFormat::kFp8E4M3);
  EXPECT_EQ(attn->config.axis, std::nullopt);
  EXPECT_NE(attn->origin.find("extra_list.yaml:6"), std::string::npos) << attn->origin;
}

TEST_F(RecipeFiles, ImportsAPresetByName) {
  std::string path = Write("mine.yaml", R"(
imports: {int8: int8}
$import: int8
residual_add_quantizers: true
quantizers:
  - $import: int8
  - op: "ConvTranspose"
    enable: false
)");
  StatusOr<Recipe> recipe = LoadRecipe(path);
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  EXPECT_TRUE(recipe->residual_add_quantizers);
  EXPECT_EQ(recipe->quantizers.size(), 3u);
  EXPECT_FALSE(ResolveQuantizer(*recipe, "up/input_quantizer", "ConvTranspose", std::nullopt));
}

TEST_F(RecipeFiles, UnknownTopLevelKeyNamesFileLineAndKey) {
  std::string path = Write("bad.yaml", "target: cpu\nquantiser:\n  - name: x\n");
  std::string error = ErrorOf(path);
  EXPECT_NE(error.find("bad.yaml:2:1"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown key 'quantiser'"), std::string::npos) << error;
}

TEST_F(RecipeFiles, UnknownEntryKeyNamesItsPath) {
  std::string path = Write("bad.yaml", "quantizers:\n  - name: x\n    formt: int8\n");
  std::string error = ErrorOf(path);
  EXPECT_NE(error.find("bad.yaml:3:5"), std::string::npos) << error;
  EXPECT_NE(error.find("quantizers[0].formt"), std::string::npos) << error;
}

TEST_F(RecipeFiles, WrongTypesAndBadEnumValues) {
  struct Case {
    std::string text, where, what;
  } cases[] = {
      {"quantizers:\n  - bits: eight\n", "bad.yaml:2:5", "must be an integer"},
      {"quantizers:\n  - bits: 6\n", "bad.yaml:2:5", "only 8-bit and 4-bit"},
      {"quantizers:\n  - format: int3\n", "bad.yaml:2:5", "'int3' is not valid"},
      {"quantizers:\n  - format: int4\n    bits: 8\n", "bad.yaml:2:5", "4-bit values"},
      {"quantizers:\n  - block_size: 48\n", "bad.yaml:2:5", "not a power of two"},
      {"quantizers:\n  - algorithm: gptq\n", "bad.yaml:2:5", "rtn, clip, awq"},
      {"quantizers:\n  - scale_type: bf16\n", "bad.yaml:2:5", "fp32 or fp16"},
      {"quantizers:\n  - format: int4\n    block_size: 0\n", "bad.yaml:2:5", "blockwise"},
      {"quantizers:\n  - axis: rows\n", "bad.yaml:2:5", "'channel', null"},
      {"quantizers:\n  - symmetric: maybe\n", "bad.yaml:2:5", "true or false"},
      {"quantizers:\n  - percentile: 150\n", "bad.yaml:2:5", "(0, 100]"},
      {"quantizers:\n  - name: x\n", "bad.yaml:2:5", "sets nothing"},
      {"quantizers:\n  - format: fp8_e4m3\n    symmetric: false\n", "bad.yaml:2:5",
       "no zero point"},
      {"target: gpu\n", "bad.yaml:1:1", "use one of cpu, trt"},
      {"calibrator: kl\n", "bad.yaml:1:1", "max, percentile, entropy, mse"},
      {"calibrator: {percentile: 99}\n", "bad.yaml:1:1", "needs 'method'"},
      {"residual_add_quantizers: 3\n", "bad.yaml:1:1", "true or false"},
      {"quantizers: {name: x}\n", "bad.yaml:1:1", "must be a list"},
      {"- name: x\n", "bad.yaml:1:1", "must be a YAML mapping"},
      {"quantizers:\n  - name: [x\n", "bad.yaml:", "YAML syntax error"},
      {"", "bad.yaml", "empty"},
  };
  for (const Case& c : cases) {
    std::string path = Write("bad.yaml", c.text);
    std::string error = ErrorOf(path);
    EXPECT_NE(error.find(c.where), std::string::npos) << c.text << " -> " << error;
    EXPECT_NE(error.find(c.what), std::string::npos) << c.text << " -> " << error;
  }
}

TEST_F(RecipeFiles, ImportCycleIsAnError) {
  Write("a.yaml", "imports: {b: b.yaml}\n$import: b\n");
  Write("b.yaml", "imports: {a: a.yaml}\n$import: a\n");
  std::string error = ErrorOf((dir_ / "a.yaml").string());
  EXPECT_NE(error.find("import cycle"), std::string::npos) << error;
  EXPECT_NE(error.find("b.yaml:2:"), std::string::npos) << error;
}

TEST_F(RecipeFiles, ListSpliceCycleIsAnError) {
  std::string path = Write("self.yaml", "imports: {me: self.yaml}\nquantizers:\n  - $import: me\n");
  std::string error = ErrorOf(path);
  EXPECT_NE(error.find("import cycle"), std::string::npos) << error;
}

TEST_F(RecipeFiles, MissingImportFileAndUnknownAlias) {
  std::string missing = Write("m.yaml", "imports:\n  base: nowhere.yaml\n$import: base\n");
  std::string error = ErrorOf(missing);
  EXPECT_NE(error.find("m.yaml:2:3"), std::string::npos) << error;
  EXPECT_NE(error.find("nowhere.yaml"), std::string::npos) << error;
  std::string alias = Write("u.yaml", "imports: {base: int8}\nquantizers:\n  - $import: bsae\n");
  error = ErrorOf(alias);
  EXPECT_NE(error.find("u.yaml:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown alias 'bsae'"), std::string::npos) << error;
  EXPECT_NE(error.find("declared: base"), std::string::npos) << error;
}

TEST_F(RecipeFiles, MissingRecipeIsNotFound) {
  StatusOr<Recipe> recipe = LoadRecipe((dir_ / "absent.yaml").string());
  ASSERT_FALSE(recipe.ok());
  EXPECT_EQ(recipe.status().code(), StatusCode::kNotFound);
  EXPECT_NE(recipe.status().message().find("int8_residual"), std::string::npos);
}

// The error kinds of recipe.h: qtune quantize exits 2 on InvalidArgument (the YAML asks for
// something invalid) and 3 on NotFound/DataLoss (the file is missing or not a YAML recipe).
TEST_F(RecipeFiles, ErrorCodeSaysWhetherTheFileOrWhatItAsksIsBad) {
  Write("cycle.yaml", "imports: {r: r.yaml}\n$import: r\n");
  struct Case {
    std::string text;
    StatusCode code;
  } cases[] = {
      {"quantizers:\n  - format: int5\n", StatusCode::kInvalidArgument},
      {"quantizers:\n  - format: int4\n    block_size: 48\n", StatusCode::kInvalidArgument},
      {"quantizers:\n  - algorithm: gptq\n", StatusCode::kInvalidArgument},
      {"bogus: 1\n", StatusCode::kInvalidArgument},
      {"$import: nothing\n", StatusCode::kInvalidArgument},
      {"imports: {c: cycle.yaml}\n$import: c\n", StatusCode::kInvalidArgument},
      {"imports: {m: missing.yaml}\n$import: m\n", StatusCode::kNotFound},
      {"quantizers: [\n", StatusCode::kDataLoss},
      {"", StatusCode::kDataLoss},
      {"- name: x\n", StatusCode::kDataLoss},
      {"a: 1\n---\nb: 2\n---\nc: 3\n", StatusCode::kDataLoss},
  };
  for (const Case& c : cases) {
    StatusOr<Recipe> recipe = LoadRecipe(Write("r.yaml", c.text));
    ASSERT_FALSE(recipe.ok()) << c.text;
    EXPECT_EQ(recipe.status().code(), c.code) << c.text << " -> " << recipe.status().ToString();
  }
}

TEST_F(RecipeFiles, ImportingAListWhereAMappingIsExpected) {
  Write("list.yaml", "- name: x\n  enable: false\n");
  std::string path = Write("r.yaml", "imports: {l: list.yaml}\n$import: l\n");
  std::string error = ErrorOf(path);
  EXPECT_NE(error.find("r.yaml:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("not a mapping"), std::string::npos) << error;
}

TEST(RecipeCliTest, RecipeIsAuthoritative) {
  StatusOr<Recipe> recipe = ParseRecipe("target: trt\ncalibrator: entropy\n", "r.yaml");
  ASSERT_TRUE(recipe.ok());
  auto agree = ResolveCliOverrides(*recipe, {Target::kTrt, CalibratorKind::kEntropy});
  ASSERT_TRUE(agree.ok());
  EXPECT_EQ(agree->target, Target::kTrt);
  auto contradict = ResolveCliOverrides(*recipe, {Target::kCpu, std::nullopt});
  ASSERT_FALSE(contradict.ok());
  EXPECT_NE(contradict.status().message().find("--target cpu contradicts"), std::string::npos);
  auto calib = ResolveCliOverrides(*recipe, {std::nullopt, CalibratorKind::kMse});
  ASSERT_FALSE(calib.ok());
  EXPECT_NE(calib.status().message().find("--calibrator mse"), std::string::npos);
  // Presets leave both open: the command line fills them in.
  StatusOr<Recipe> preset = LoadRecipe("int8");
  ASSERT_TRUE(preset.ok());
  auto open = ResolveCliOverrides(*preset, {Target::kTrt, CalibratorKind::kPercentile});
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->target, Target::kTrt);
  EXPECT_EQ(open->calibrator.kind, CalibratorKind::kPercentile);
  Recipe applied = *preset;
  ASSERT_TRUE(ApplyCliOverrides(applied, {std::nullopt, CalibratorKind::kEntropy}).ok());
  auto input = ResolveQuantizer(applied, "c/input_quantizer", "Conv", std::nullopt);
  ASSERT_TRUE(input);
  EXPECT_EQ(input->config.calibrator.kind, CalibratorKind::kEntropy);
  EXPECT_EQ(applied.target, Target::kCpu);
  auto defaults = ResolveCliOverrides(*preset, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->target, Target::kCpu);
  EXPECT_EQ(defaults->calibrator.kind, CalibratorKind::kMax);
}

TEST(RecipeCliTest, AccuracyFallbackFromTheRecipeOrTheCommandLineNeverBoth) {
  StatusOr<Recipe> recipe =
      ParseRecipe("accuracy_fallback: {min_sqnr_db: 45, samples: 4}\n", "r.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  EXPECT_EQ(recipe->accuracy_fallback.min_sqnr_db, 45.0);
  EXPECT_EQ(recipe->accuracy_fallback.samples, 4);
  EXPECT_FALSE(recipe->accuracy_fallback.max_float_fraction.has_value());

  // The command line fills in what the recipe leaves open, and may repeat what it says.
  CliOverrides cli;
  cli.fallback.max_float_fraction = 0.5;
  cli.fallback.min_sqnr_db = 45.0;
  auto merged = ResolveCliOverrides(*recipe, cli);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->fallback.min_sqnr_db, 45.0);
  EXPECT_EQ(merged->fallback.samples, 4);
  EXPECT_EQ(merged->fallback.max_float_fraction, 0.5);

  cli.fallback.min_sqnr_db = 40.0;
  auto contradict = ResolveCliOverrides(*recipe, cli);
  ASSERT_FALSE(contradict.ok());
  EXPECT_NE(contradict.status().message().find("--min-sqnr 40 contradicts recipe 'r.yaml' "
                                               "(accuracy_fallback.min_sqnr_db: 45)"),
            std::string::npos)
      << contradict.status().message();

  // Tuning knobs without a target, from either side, are an error.
  StatusOr<Recipe> preset = LoadRecipe("int8");
  ASSERT_TRUE(preset.ok());
  CliOverrides knobs;
  knobs.fallback.samples = 16;
  auto lonely = ResolveCliOverrides(*preset, knobs);
  ASSERT_FALSE(lonely.ok());
  EXPECT_NE(lonely.status().message().find("needs --min-sqnr"), std::string::npos);
  CliOverrides nan;
  nan.fallback.min_sqnr_db = std::nan("");
  EXPECT_FALSE(ResolveCliOverrides(*preset, nan).ok());
  auto none = ResolveCliOverrides(*preset, {});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->fallback.min_sqnr_db.has_value());
}

TEST(RecipeCliTest, AccuracyFallbackBlockErrorsNameTheKey) {
  struct Case {
    const char* yaml;
    const char* expected;
  };
  for (const Case& c : {
           Case{"accuracy_fallback: {samples: 4}\n", "needs 'min_sqnr_db'"},
           Case{"accuracy_fallback: {min_sqnr_db: 40, max_float_fraction: 2}\n",
                "key 'accuracy_fallback.max_float_fraction': max_float_fraction must be in [0, 1]"},
           Case{"accuracy_fallback: {min_sqnr_db: 40, samples: 0}\n", "at least 1"},
           Case{"accuracy_fallback: {min_sqnr_db: loud}\n", "must be a finite number"},
           Case{"accuracy_fallback: {min_sqnr_db: 40, target: 3}\n",
                "unknown key 'target'; allowed here: min_sqnr_db, samples, max_float_fraction"},
           Case{"accuracy_fallback: 45\n", "must be a mapping"},
       }) {
    StatusOr<Recipe> recipe = ParseRecipe(c.yaml, "r.yaml");
    ASSERT_FALSE(recipe.ok()) << c.yaml;
    EXPECT_NE(recipe.status().message().find(c.expected), std::string::npos)
        << c.yaml << " -> " << recipe.status().message();
    EXPECT_NE(recipe.status().message().find("r.yaml:1:"), std::string::npos)
        << recipe.status().message();
  }
}

}  // namespace
}  // namespace qtune::quant
