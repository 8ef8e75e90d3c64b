// Tune -> SaveTuned -> LoadTuned on fmnist with real processes: the loaded session runs the
// tuned configuration on the SUPPLIED weights, never on stored ones.
#include "tune/tune.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/onnx_io.h"
#include "quant/plan_json.h"
#include "tune/checkpoint_test_util.h"
#include "tune/tune_test_util.h"

namespace qtune::tune {
namespace {

using testing::CalibInputs;
using testing::FastTuneOptions;
using ::testing::HasSubstr;
using testing::RunGraph;
using testing::SameOutputs;
using testing::ScratchDir;

class TuneTest : public ::testing::Test {
 protected:
  // One int8 tune shared by the tests (it takes seconds).
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir();
    auto model = ir::LoadModel(testing::kFmnistModel);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(*model).release();
    auto result = Tune(*model_, FastTuneOptions({"int8"}));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    result_ = new TuneResult(std::move(*result));
    checkpoint_ = scratch_->Join("fmnist.qtc");
    ASSERT_TRUE(SaveTuned(checkpoint_, *result_).ok());
  }
  static void TearDownTestSuite() {
    delete result_;
    delete model_;
    delete scratch_;
  }
  void SetUp() override {
    ASSERT_NE(result_, nullptr);
    options_.cache_dir = cache_.path();
  }

  static ScratchDir* scratch_;
  static ir::Graph* model_;
  static TuneResult* result_;
  static std::string checkpoint_;
  ScratchDir cache_;
  LoadTunedOptions options_;
};
ScratchDir* TuneTest::scratch_ = nullptr;
ir::Graph* TuneTest::model_ = nullptr;
TuneResult* TuneTest::result_ = nullptr;
std::string TuneTest::checkpoint_;

TEST_F(TuneTest, Int8PassesItsCheckAndIsMeasured) {
  const TuneRow& row = result_->chosen_row();
  EXPECT_EQ(row.candidate, "int8");
  EXPECT_EQ(row.status, TuneRow::Status::kPassed) << row.why;
  ASSERT_TRUE(row.sqnr_db.has_value());
  EXPECT_GE(*row.sqnr_db, 20.0);
  EXPECT_GT(row.latency_ms, 0);
  EXPECT_GT(row.fp32_latency_ms, 0);
  EXPECT_DOUBLE_EQ(row.throughput, 1000.0 / row.latency_ms);
  EXPECT_EQ(result_->input_sizes.at("input"), (std::vector<int64_t>{1, 1, 28, 28}));
}

TEST_F(TuneTest, SameWeightsOutputsEqualADirectRunOfTheConfig) {
  auto tuned = LoadTunedSession(*model_, checkpoint_, options_);
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  EXPECT_EQ(tuned->candidate, "int8");
  EXPECT_TRUE(tuned->weight_warning.empty());
  auto inputs = CalibInputs(16);
  auto loaded = tuned->session->Run(inputs);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto direct = BuildTunedGraph(*model_, &result_->plans.at("int8"));
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_TRUE(SameOutputs(*loaded, RunGraph(**direct, 1, inputs)));
}

TEST_F(TuneTest, DifferentWeightsAreRefusedNamingTheInitializer) {
  const std::string name = testing::LargestWeightName(*model_);
  auto other = testing::WithScaledWeight(*model_, name, 0.5f);
  auto tuned = LoadTunedSession(*other, checkpoint_, options_);
  ASSERT_FALSE(tuned.ok());
  EXPECT_EQ(tuned.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(tuned.status().message(), HasSubstr(name));
  EXPECT_THAT(tuned.status().message(), HasSubstr("--allow-weight-mismatch"));
}

TEST_F(TuneTest, AllowedWeightMismatchFollowsTheSuppliedWeights) {
  const std::string name = testing::LargestWeightName(*model_);
  auto other = testing::WithScaledWeight(*model_, name, 0.5f);
  options_.allow_weight_mismatch = true;
  auto tuned = LoadTunedSession(*other, checkpoint_, options_);
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  EXPECT_THAT(tuned->weight_warning, HasSubstr(name));
  auto inputs = CalibInputs(16);
  auto loaded = tuned->session->Run(inputs);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  // Equal to quantizing the supplied weights with the stored plan...
  auto supplied = BuildTunedGraph(*other, &result_->plans.at("int8"));
  ASSERT_TRUE(supplied.ok()) << supplied.status().ToString();
  EXPECT_TRUE(SameOutputs(*loaded, RunGraph(**supplied, 1, inputs)));
  // ... and not to the tuned weights' outputs.
  auto tuned_weights = BuildTunedGraph(*model_, &result_->plans.at("int8"));
  ASSERT_TRUE(tuned_weights.ok());
  EXPECT_FALSE(SameOutputs(*loaded, RunGraph(**tuned_weights, 1, inputs)));
}

TEST_F(TuneTest, SecondLoadReusesTheUnpackedCache) {
  auto first = LoadTunedSession(*model_, checkpoint_, options_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->reused_cache);
  auto second = LoadTunedSession(*model_, checkpoint_, options_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->reused_cache);
}

TEST_F(TuneTest, CheckpointIsSmallAndHoldsNoWeights) {
  EXPECT_LT(std::filesystem::file_size(checkpoint_), 64u * 1024u);
  auto loaded = LoadCheckpoint(checkpoint_, testing::OptionsWithCache(cache_.path()));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::vector<std::string> entries;
  for (const auto& [name, digest] : loaded->file_sha256) entries.push_back(name);
  EXPECT_EQ(entries, (std::vector<std::string>{"manifest.json", "plan.json"}));
  const nlohmann::json& t = loaded->manifest.tuning;
  EXPECT_EQ(t["candidate"], "int8");
  EXPECT_EQ(t["threads"], 1);
  EXPECT_EQ(t["recipe"], "int8");
  EXPECT_TRUE(t["table"].is_array());
  EXPECT_EQ(loaded->manifest.weights, FingerprintWeights(*model_));
}

TEST_F(TuneTest, FailedCheckLeavesFp32AsTheResult) {
  TuneOptions o = FastTuneOptions({"int8"});
  o.min_sqnr_db = 200;
  auto result = Tune(*model_, o);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->rows.size(), 2u);
  EXPECT_EQ(result->rows[0].status, TuneRow::Status::kFailed);
  EXPECT_THAT(result->rows[0].why, HasSubstr("SQNR"));
  EXPECT_EQ(result->chosen_row().candidate, "fp32");
  EXPECT_THAT(result->strategy_note, HasSubstr("no candidate passed"));
  ScratchDir dir;
  ASSERT_TRUE(SaveTuned(dir.Join("fp32.qtc"), *result).ok());
  auto tuned = LoadTunedSession(*model_, dir.Join("fp32.qtc"), options_);
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  EXPECT_EQ(tuned->candidate, "fp32");
}

TEST_F(TuneTest, FullTableReportsSkippedCandidatesWithReasons) {
  TuneOptions o = FastTuneOptions(AllCandidates());
  o.threads = {1, 2};
  auto result = Tune(*model_, o);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->rows.size(), 10u);
  for (const TuneRow& row : result->rows) {
    if (row.candidate == "autotuned") {
      EXPECT_EQ(row.status, TuneRow::Status::kSkipped);
      EXPECT_THAT(row.why, HasSubstr("--autotune-dir"));
    } else {
      EXPECT_EQ(row.status, TuneRow::Status::kPassed) << row.candidate << ": " << row.why;
      EXPECT_DOUBLE_EQ(row.throughput, 1000.0 / (row.latency_ms * row.threads));
    }
  }
  EXPECT_EQ(result->chosen_row().status, TuneRow::Status::kPassed);
  std::string table = FormatTuneTable(*result);
  EXPECT_THAT(table, HasSubstr("chosen: "));
  EXPECT_THAT(table, HasSubstr("* "));
}

// Each candidate kind forced alone: saved, loaded, and equal to a direct run of its graph.
TEST_F(TuneTest, EveryCandidateKindRoundTrips) {
  ScratchDir autotune_dir;
  {
    std::ofstream plan(autotune_dir.Join("plan.json"));
    plan << quant::PlanToJsonText(result_->plans.at("int8"));
  }
  auto inputs = CalibInputs(8);
  for (const std::string kind : {"fp32", "bf16", "int8-fallback", "autotuned"}) {
    SCOPED_TRACE(kind);
    TuneOptions o = FastTuneOptions({kind});
    o.autotune_dir = autotune_dir.path();
    o.strategy = "first-wins";
    auto result = Tune(*model_, o);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_EQ(result->chosen_row().candidate, kind) << FormatTuneTable(*result);
    ScratchDir dir;
    ASSERT_TRUE(SaveTuned(dir.Join("m.qtc"), *result).ok());
    auto tuned = LoadTunedSession(*model_, dir.Join("m.qtc"), options_);
    ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
    EXPECT_EQ(tuned->candidate, kind);
    auto plan = result->plans.find(kind);
    auto direct = BuildTunedGraph(*model_, plan == result->plans.end() ? nullptr : &plan->second);
    ASSERT_TRUE(direct.ok());
    auto loaded = tuned->session->Run(inputs);
    ASSERT_TRUE(loaded.ok());
    EXPECT_TRUE(SameOutputs(*loaded, RunGraph(**direct, 1, inputs, kind == "bf16")));
  }
}

// bf16 is the fp32 model computed in bfloat16: close to fp32 (a high SQNR, but not
// infinite: the rounding is real), no plan stored, and the loaded session computes in bf16.
TEST_F(TuneTest, Bf16IsScoredAndLoadsComputingInBf16) {
  TuneOptions o = FastTuneOptions({"bf16"});
  o.strategy = "first-wins";
  auto result = Tune(*model_, o);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const TuneRow& row = result->chosen_row();
  ASSERT_EQ(row.candidate, "bf16") << FormatTuneTable(*result);
  EXPECT_EQ(row.status, TuneRow::Status::kPassed) << row.why;
  EXPECT_GT(row.sqnr_db, 20.0);
  EXPECT_LT(row.sqnr_db, 200.0);
  EXPECT_GT(row.latency_ms, 0.0);
  EXPECT_EQ(result->plans.count("bf16"), 0u);
  ScratchDir dir;
  ASSERT_TRUE(SaveTuned(dir.Join("m.qtc"), *result).ok());
  auto tuned = LoadTunedSession(*model_, dir.Join("m.qtc"), options_);
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  EXPECT_TRUE(tuned->session->options().bf16);
}

TEST_F(TuneTest, UnknownCandidateIsInvalidArgument) {
  auto result = Tune(*model_, FastTuneOptions({"int4"}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("int4"));
}

}  // namespace
}  // namespace qtune::tune
