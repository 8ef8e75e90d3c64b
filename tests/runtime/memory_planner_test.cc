#include "runtime/plan/memory_planner.h"

#include <gtest/gtest.h>

#include <random>

namespace qtune::runtime {
namespace {

TEST(MemoryPlannerTest, DisjointLifetimesShareMemory) {
  std::vector<BufferRequest> requests = {{1000, 0, 1}, {1000, 2, 3}, {1000, 4, 5}};
  MemoryPlan plan = PlanMemory(requests);
  EXPECT_TRUE(IsValidMemoryPlan(requests, plan));
  EXPECT_EQ(plan.arena_bytes, 1024);  // one aligned slot reused three times
}

TEST(MemoryPlannerTest, OverlappingLifetimesNeverOverlapInMemory) {
  std::vector<BufferRequest> requests = {{100, 0, 2}, {200, 1, 3}, {300, 2, 4}};
  MemoryPlan plan = PlanMemory(requests);
  EXPECT_TRUE(IsValidMemoryPlan(requests, plan));
  EXPECT_EQ(plan.arena_bytes, 128 + 256 + 320);
}

TEST(MemoryPlannerTest, ChainOfLayersNeedsOnlyTwoBuffers) {
  // A chain a -> b -> c -> d: each buffer is live from its producer to its one consumer.
  std::vector<BufferRequest> requests;
  for (int i = 0; i < 10; ++i) requests.push_back({4096, i, i + 1});
  MemoryPlan plan = PlanMemory(requests);
  EXPECT_TRUE(IsValidMemoryPlan(requests, plan));
  EXPECT_EQ(plan.arena_bytes, 2 * 4096);
}

TEST(MemoryPlannerTest, ResidualSkipKeepsItsBufferAlive) {
  // x (0..3) is read again by the Add at step 3 while a and b come and go.
  std::vector<BufferRequest> requests = {{4096, 0, 3}, {4096, 1, 2}, {4096, 2, 3}, {4096, 3, 4}};
  MemoryPlan plan = PlanMemory(requests);
  EXPECT_TRUE(IsValidMemoryPlan(requests, plan));
  EXPECT_EQ(plan.arena_bytes, 3 * 4096);
}

TEST(MemoryPlannerTest, OffsetsAreAlignedAndZeroSizedBuffersAreHarmless) {
  std::vector<BufferRequest> requests = {{1, 0, 5}, {0, 1, 2}, {65, 1, 3}, {3, 2, 4}};
  MemoryPlan plan = PlanMemory(requests, 64);
  EXPECT_TRUE(IsValidMemoryPlan(requests, plan));
  for (int64_t offset : plan.offsets) EXPECT_EQ(offset % 64, 0);
}

TEST(MemoryPlannerTest, RandomLifetimesAlwaysGiveValidPlansNoBiggerThanTheSum) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferRequest> requests;
    int64_t total = 0;
    int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      int first = static_cast<int>(rng() % 30);
      int last = first + static_cast<int>(rng() % 8);
      int64_t bytes = static_cast<int64_t>(rng() % 5000);
      requests.push_back({bytes, first, last});
      total += (std::max<int64_t>(bytes, 1) + 63) / 64 * 64;
    }
    MemoryPlan plan = PlanMemory(requests);
    ASSERT_TRUE(IsValidMemoryPlan(requests, plan)) << "seed 1234, trial " << trial;
    EXPECT_LE(plan.arena_bytes, total);
  }
}

TEST(MemoryPlannerTest, ValidatorCatchesOverlap) {
  std::vector<BufferRequest> requests = {{100, 0, 2}, {100, 1, 3}};
  MemoryPlan bad{{0, 50}, 150};
  EXPECT_FALSE(IsValidMemoryPlan(requests, bad));
}

}  // namespace
}  // namespace qtune::runtime
