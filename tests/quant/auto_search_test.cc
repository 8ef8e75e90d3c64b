// The budgeted format choice (auto_search.h) against brute force on small random
// instances (seeded; the seed is printed on failure), the greedy fallback, the frontier.
#include "quant/auto_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace qtune::quant {
namespace {

// Items like the search sees them: options of rising cost (8, 16, 32 bits x weights) and
// falling noise, the last one exact.
std::vector<KnapsackItem> RandomItems(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> weights(0, 5000);
  std::uniform_real_distribution<double> db(10.0, 60.0);
  std::vector<KnapsackItem> items(n);
  for (KnapsackItem& item : items) {
    const double w = weights(rng);
    item.options = {
        {8 * w, SqnrDbToNoise(db(rng))}, {16 * w, SqnrDbToNoise(db(rng) + 20)}, {32 * w, 0.0}};
  }
  return items;
}

struct Best {
  double noise = std::numeric_limits<double>::infinity();
  double cost = std::numeric_limits<double>::infinity();
};

// Every combination: the least noise within `budget`, the least cost within `max_noise`.
void BruteForce(const std::vector<KnapsackItem>& items, double budget, double max_noise,
                Best& by_budget, Best& by_noise) {
  std::vector<int> option(items.size(), 0);
  for (;;) {
    double cost = 0, noise = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      cost += items[i].options[option[i]].cost;
      noise += items[i].options[option[i]].noise;
    }
    if (cost <= budget && noise < by_budget.noise) by_budget = {noise, cost};
    if (noise <= max_noise && cost < by_noise.cost) by_noise = {noise, cost};
    size_t i = 0;
    while (i < items.size() && ++option[i] == static_cast<int>(items[i].options.size())) {
      option[i++] = 0;
    }
    if (i == items.size()) return;
  }
}

TEST(AutoSearch, DynamicProgrammingMatchesBruteForce) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto items = RandomItems(seed, 7);
    const double low = MinTotalCost(items), high = MaxTotalCost(items);
    const double budget = low + (high - low) * (seed % 10) / 10.0;
    const double max_noise = SqnrDbToNoise(20.0 + seed % 30);
    Best by_budget, by_noise;
    BruteForce(items, budget, max_noise, by_budget, by_noise);
    // Fine levels: the discretization (costs rounded up) loses almost nothing.
    KnapsackOptions fine;
    fine.cost_levels = 200000;
    KnapsackChoice c = SolveBudget(items, budget, fine);
    EXPECT_TRUE(c.exact && c.feasible);
    EXPECT_LE(c.cost, budget);
    EXPECT_NEAR(c.noise, by_budget.noise, 1e-12 + 1e-9 * by_budget.noise);
    KnapsackChoice n = SolveMaxNoise(items, max_noise, fine);
    ASSERT_TRUE(n.feasible);
    EXPECT_LE(n.noise, max_noise);
    EXPECT_LE(n.cost, by_noise.cost * 1.0001 + 1e-9);
    // Coarse levels still never exceed the budget.
    KnapsackChoice coarse = SolveBudget(items, budget, {.cost_levels = 50});
    EXPECT_LE(coarse.cost, budget);
    EXPECT_GE(coarse.noise, by_budget.noise - 1e-15);
  }
}

TEST(AutoSearch, GreedyFallbackFitsTheBudgetAndIsClose) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto items = RandomItems(seed, 8);
    const double low = MinTotalCost(items), high = MaxTotalCost(items);
    const double budget = low + (high - low) * 0.4;
    KnapsackChoice greedy = SolveBudget(items, budget, {.max_dp_cells = 1});
    EXPECT_FALSE(greedy.exact);
    EXPECT_TRUE(greedy.feasible);
    EXPECT_LE(greedy.cost, budget);
    KnapsackChoice exact = SolveBudget(items, budget, {.cost_levels = 100000});
    // A heuristic: never better than the optimum, and within 10 dB of it here.
    EXPECT_GE(greedy.noise, exact.noise - 1e-15);
    EXPECT_LT(NoiseToSqnrDb(exact.noise) - NoiseToSqnrDb(greedy.noise), 10.0);
    KnapsackChoice by_noise = SolveMaxNoise(items, SqnrDbToNoise(35), {.max_dp_cells = 1});
    EXPECT_FALSE(by_noise.exact);
    EXPECT_LE(by_noise.noise, SqnrDbToNoise(35));
  }
}

TEST(AutoSearch, BudgetBelowTheCheapestChoiceIsInfeasible) {
  auto items = RandomItems(7, 5);
  KnapsackChoice c = SolveBudget(items, MinTotalCost(items) * 0.5);
  EXPECT_FALSE(c.feasible);
  EXPECT_DOUBLE_EQ(c.cost, MinTotalCost(items));  // the cheapest choice, reported as such
  KnapsackChoice n = SolveMaxNoise({{{{{8, 1.0}, {32, 0.5}}}}}, 0.1);
  EXPECT_FALSE(n.feasible);
  EXPECT_EQ(n.option, std::vector<int>{1});  // the least noise there is
}

TEST(AutoSearch, FrontierRunsFromCheapestToExactWithFallingNoise) {
  auto items = RandomItems(11, 10);
  auto frontier = Frontier(items, 9);
  ASSERT_EQ(frontier.size(), 9u);
  EXPECT_DOUBLE_EQ(frontier.front().cost, MinTotalCost(items));
  EXPECT_EQ(frontier.back().noise, 0.0);  // every item exact
  for (size_t p = 1; p < frontier.size(); ++p) {
    EXPECT_LE(frontier[p].noise, frontier[p - 1].noise) << "point " << p;
  }
}

TEST(AutoSearch, ZeroCostItemsTakeTheirMostAccurateOption) {
  // A cost-excluded (or weightless) item costs nothing in any format.
  std::vector<KnapsackItem> items = {{{{0, 1e-2}, {0, 1e-4}, {0, 0}}}, {{{8, 1e-3}, {32, 0}}}};
  KnapsackChoice c = SolveBudget(items, 8);
  EXPECT_EQ(c.option, (std::vector<int>{2, 0}));
}

TEST(AutoSearch, SqnrNoiseConversions) {
  EXPECT_DOUBLE_EQ(SqnrDbToNoise(30), 1e-3);
  EXPECT_DOUBLE_EQ(NoiseToSqnrDb(1e-3), 30);
  EXPECT_EQ(SqnrDbToNoise(std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_TRUE(std::isinf(NoiseToSqnrDb(0)));
  // Two equal independent noises: 3 dB worse than each.
  EXPECT_NEAR(NoiseToSqnrDb(2 * SqnrDbToNoise(40)), 40 - 3.0103, 1e-3);
}

}  // namespace
}  // namespace qtune::quant

namespace qtune::quant {
namespace {

// A choice that costs exactly the budget is taken even when rounding each cost up to the
// table's unit pushes its discretized cost over: the fmnist case of all int8 at exactly 8
// bits, where the search used to fall back to a 7-bit choice 5 dB worse.
TEST(AutoSearch, AChoiceAtExactlyTheBudgetFits) {
  // Weights 144, 4608, 14336, 57344; options int4-like 4.5, int8 8, fp32 32 bits.
  std::vector<KnapsackItem> items;
  for (double w : {144.0, 4608.0, 14336.0, 57344.0}) {
    items.push_back({{{4.5 * w, SqnrDbToNoise(20)}, {8 * w, SqnrDbToNoise(40)}, {32 * w, 0}}});
  }
  const double all_int8 = 8 * (144.0 + 4608 + 14336 + 57344);
  KnapsackChoice c = SolveBudget(items, all_int8, KnapsackOptions{.cost_levels = 997});
  EXPECT_TRUE(c.exact);
  EXPECT_TRUE(c.feasible);
  EXPECT_LE(c.cost, all_int8);
  EXPECT_EQ(c.option, (std::vector<int>{1, 1, 1, 1}));
}

}  // namespace
}  // namespace qtune::quant
