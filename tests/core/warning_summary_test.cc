// SummarizeLineWarnings (core/warning_summary.h): the first warnings of each kind are kept,
// the rest counted in one line per kind.
#include "core/warning_summary.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace qtune {
namespace {

TEST(WarningSummaryTest, FewWarningsAreKeptAsTheyAre) {
  std::vector<std::string> w = {"s.jsonl:2: damaged record skipped (bad checksum)",
                                "s.jsonl:3: damaged record skipped (bad JSON)"};
  EXPECT_EQ(SummarizeLineWarnings(w), w);
  EXPECT_TRUE(SummarizeLineWarnings({}).empty());
}

TEST(WarningSummaryTest, ManyOfOneKindBecomeTheFirstFiveAndACount) {
  std::vector<std::string> w;
  for (int line = 2; line < 40904; ++line) {
    w.push_back("s.jsonl:" + std::to_string(line) + ": damaged record skipped (" +
                (line % 2 ? "bad checksum" : "not a \"<checksum> <json>\" line") + ")");
  }
  w.push_back("s.jsonl:40904: torn last record (no newline, 3 bytes) dropped; file truncated");
  std::vector<std::string> out = SummarizeLineWarnings(w);
  ASSERT_EQ(out.size(), 7u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out[i], w[i]);
  EXPECT_EQ(out[5], w.back());
  EXPECT_EQ(out[6], "s.jsonl: ... and 40897 more lines like it (damaged record skipped)");
}

TEST(WarningSummaryTest, KindsAndFilesAreCountedApart) {
  std::vector<std::string> w;
  for (int i = 0; i < 7; ++i) w.push_back("a:" + std::to_string(i + 2) + ": x skipped (1)");
  for (int i = 0; i < 6; ++i) w.push_back("b:" + std::to_string(i + 2) + ": x skipped (1)");
  for (int i = 0; i < 3; ++i) w.push_back("a:" + std::to_string(i + 9) + ": y skipped");
  std::vector<std::string> out = SummarizeLineWarnings(w, 2);
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(out[0], "a:2: x skipped (1)");
  EXPECT_EQ(out[2], "b:2: x skipped (1)");
  EXPECT_EQ(out[4], "a:9: y skipped");
  EXPECT_EQ(out[6], "a: ... and 5 more lines like it (x skipped)");
  EXPECT_EQ(out[7], "b: ... and 4 more lines like it (x skipped)");
  EXPECT_EQ(out[8], "a: ... and 1 more lines like it (y skipped)");
}

TEST(WarningSummaryTest, WarningsWithoutALineNumberAreGroupedByText) {
  std::vector<std::string> w(4, "something odd (details)");
  std::vector<std::string> out = SummarizeLineWarnings(w, 1);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], "... and 3 more lines like it (something odd)");
}

}  // namespace
}  // namespace qtune
