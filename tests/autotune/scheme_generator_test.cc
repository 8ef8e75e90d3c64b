#include "autotune/scheme_generator.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace qtune::autotune {
namespace {

std::vector<std::string> Drain(SchemeGenerator& generator, const std::string& best, int max) {
  std::vector<std::string> out;
  while (static_cast<int>(out.size()) < max) {
    auto next = generator.Next(best);
    if (!next.has_value()) break;
    out.push_back(*next);
  }
  return out;
}

TEST(SchemeGeneratorTest, FewPointsGiveSeedsThenEverySubsetOnce) {
  SchemeGenerator generator(3, {"101", "111"}, /*exhaustive_max_points=*/3, /*seed=*/1);
  std::vector<std::string> all = Drain(generator, "101", 100);
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(all[0], "101");
  EXPECT_EQ(all[1], "111");
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 8u);
}

TEST(SchemeGeneratorTest, SeedsOfTheWrongLengthAreIgnored) {
  SchemeGenerator generator(2, {"1", "110", "01"}, 3, 1);
  EXPECT_EQ(generator.Next("00"), "01");
}

TEST(SchemeGeneratorTest, MarkedSchemesAreNeverProposed) {
  SchemeGenerator generator(2, {}, 3, 1);
  generator.MarkSeen("00");
  for (const std::string& s : Drain(generator, "00", 100)) EXPECT_NE(s, "00");
}

TEST(SchemeGeneratorTest, ManyPointsFlipEachBitOfTheCurrentBestThenMutate) {
  SchemeGenerator generator(6, {}, 3, 7);
  std::vector<std::string> flips = Drain(generator, "000000", 6);
  const std::vector<std::string> expected = {"100000", "010000", "001000",
                                             "000100", "000010", "000001"};
  EXPECT_EQ(flips, expected);
  std::vector<std::string> random = Drain(generator, "000000", 20);
  EXPECT_EQ(random.size(), 20u);
  std::set<std::string> seen(flips.begin(), flips.end());
  for (const std::string& s : random) EXPECT_TRUE(seen.insert(s).second) << s;
}

// After an adoption (generation search: between generations) the flips restart around
// the new best, from its first bit, and come before more random mutations.
TEST(SchemeGeneratorTest, ANewBestIsFlippedFromItsFirstBit) {
  SchemeGenerator generator(5, {"11111"}, 3, 7);
  EXPECT_EQ(Drain(generator, "00000", 3), (std::vector<std::string>{"11111", "10000", "01000"}));
  EXPECT_EQ(Drain(generator, "11111", 2), (std::vector<std::string>{"01111", "10111"}));
  Drain(generator, "11111", 6);  // the other flips, then random mutations
  // A new best again: one of its single-bit flips (the first not proposed yet) comes next.
  const std::optional<std::string> next = generator.Next("01111");
  ASSERT_TRUE(next.has_value());
  int differing = 0;
  for (size_t i = 0; i < next->size(); ++i) differing += (*next)[i] != "01111"[i];
  EXPECT_EQ(differing, 1) << *next;
}

TEST(SchemeGeneratorTest, SameSeedSameSequence) {
  SchemeGenerator a(10, {}, 3, 42), b(10, {}, 3, 42);
  EXPECT_EQ(Drain(a, "0101010101", 40), Drain(b, "0101010101", 40));
}

TEST(SchemeGeneratorTest, RunsDryInsteadOfLoopingForever) {
  SchemeGenerator generator(4, {}, 3, 1);  // 16 schemes exist
  std::vector<std::string> all = Drain(generator, "0000", 1000);
  EXPECT_LE(all.size(), 16u);
  EXPECT_FALSE(generator.Next("0000").has_value());
}

}  // namespace
}  // namespace qtune::autotune
