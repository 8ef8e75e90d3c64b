// The strategies pick among passed rows only, each by its own rule.
#include "tune/tune_strategy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace qtune::tune {
namespace {

TuneRow Row(const char* candidate, int threads, double latency, double sqnr,
            TuneRow::Status status = TuneRow::Status::kPassed) {
  TuneRow r;
  r.candidate = candidate;
  r.threads = threads;
  r.latency_ms = latency;
  r.throughput = 1000.0 / (latency * threads);
  r.sqnr_db = sqnr;
  r.status = status;
  return r;
}

std::vector<TuneRow> Rows() {
  return {Row("fp32", 1, 4.0, 1e9), Row("fp32", 2, 2.5, 1e9), Row("int8", 1, 2.0, 30),
          Row("int8", 2, 1.2, 30), Row("int8-fallback", 2, 1.0, 25, TuneRow::Status::kFailed)};
}

size_t Pick(const std::string& text, std::string* note = nullptr) {
  auto s = ParseTuneStrategy(text);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return PickTuneRow(Rows(), *s, note);
}

TEST(TuneStrategyTest, MinLatencyIgnoresFailedRows) { EXPECT_EQ(Pick("min-latency"), 3u); }

TEST(TuneStrategyTest, MaxThroughputIsPerCore) { EXPECT_EQ(Pick("max-throughput"), 2u); }

TEST(TuneStrategyTest, FirstWinsTakesTheFirstPassedRow) { EXPECT_EQ(Pick("first-wins"), 0u); }

TEST(TuneStrategyTest, LatencyBudgetTakesHighestSqnrWithinBudget) {
  EXPECT_EQ(Pick("latency-budget=3"), 1u);
  EXPECT_EQ(Pick("latency-budget=1.5"), 3u);
}

TEST(TuneStrategyTest, LatencyBudgetNoneWithinFallsBackToMinLatencyAndSaysSo) {
  std::string note;
  EXPECT_EQ(Pick("latency-budget=0.5", &note), 3u);
  EXPECT_THAT(note, ::testing::HasSubstr("min-latency"));
}

TEST(TuneStrategyTest, NothingPassedIsRowsSize) {
  std::vector<TuneRow> rows = {Row("int8", 1, 1, 5, TuneRow::Status::kFailed)};
  EXPECT_EQ(PickTuneRow(rows, TuneStrategy{}, nullptr), 1u);
}

TEST(TuneStrategyTest, BadStrategiesAreInvalidArgument) {
  for (const char* bad : {"fastest", "latency-budget=", "latency-budget=-1", "latency-budget=x"}) {
    auto s = ParseTuneStrategy(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace qtune::tune
