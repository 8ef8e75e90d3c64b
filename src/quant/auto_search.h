// `qtune quantize --auto`, part 2: the budgeted choice, one option per item (a group's
// format), as a multiple-choice knapsack. Pure: no graph, no engine.
//
// Each option has a cost (bits x weight elements, or milliseconds) and a noise: the
// output noise power relative to the signal when only that item takes that option,
// 10^(-SQNR/10). Noises of different items are taken to add up (independent errors), so
// a choice's predicted SQNR is -10 log10(sum of noises). The caller re-measures the
// choice as a whole, since this is only a prediction.
//
// Exact by dynamic programming over costs discretized to `cost_levels` steps of the
// largest total cost (each option's cost rounded UP, the budget DOWN, so a choice that
// fits the discretized budget fits the real one); greedy when items x levels exceeds
// `max_dp_cells` (downgrades by least added noise per cost saved, then upgrades that still
// fit).
#pragma once

#include <cstdint>
#include <vector>

namespace qtune::quant {

struct KnapsackOption {
  double cost = 0;   // >= 0
  double noise = 0;  // >= 0; 0 = exact
};

struct KnapsackItem {
  std::vector<KnapsackOption> options;  // REQUIRES: not empty
};

struct KnapsackChoice {
  std::vector<int> option;  // per item
  double cost = 0;          // real (not discretized) total cost
  double noise = 0;         // sum of the chosen noises
  bool exact = true;        // false: the greedy fallback chose
  bool feasible = true;     // false: nothing fits; the cheapest choice is returned
};

struct KnapsackOptions {
  int cost_levels = 4000;
  int64_t max_dp_cells = 20'000'000;  // items x (levels + 1)
};

// -10 log10(noise); +inf for 0.
double NoiseToSqnrDb(double noise);
// 10^(-db/10); 0 for +inf.
double SqnrDbToNoise(double db);

// Least total noise with total cost <= budget.
KnapsackChoice SolveBudget(const std::vector<KnapsackItem>& items, double budget,
                           const KnapsackOptions& options = {});

// Least total cost with total noise <= max_noise (ties: least noise). Infeasible when even
// the least-noise choice exceeds it (that choice is returned).
KnapsackChoice SolveMaxNoise(const std::vector<KnapsackItem>& items, double max_noise,
                             const KnapsackOptions& options = {});

// The frontier: for `points` budgets evenly spaced from the cheapest to the most expensive
// total cost (both included), SolveBudget's choice. Duplicates are kept (one per budget).
std::vector<KnapsackChoice> Frontier(const std::vector<KnapsackItem>& items, int points,
                                     const KnapsackOptions& options = {});

// Total cost bounds of the items (each item's cheapest / dearest option).
double MinTotalCost(const std::vector<KnapsackItem>& items);
double MaxTotalCost(const std::vector<KnapsackItem>& items);

}  // namespace qtune::quant
