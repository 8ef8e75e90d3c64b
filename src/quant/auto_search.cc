#include "quant/auto_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace qtune::quant {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

KnapsackChoice Evaluate(const std::vector<KnapsackItem>& items, std::vector<int> option,
                        bool exact) {
  KnapsackChoice c;
  c.option = std::move(option);
  c.exact = exact;
  for (size_t i = 0; i < items.size(); ++i) {
    c.cost += items[i].options[c.option[i]].cost;
    c.noise += items[i].options[c.option[i]].noise;
  }
  return c;
}

// Per item, the option with the least noise (ties: the cheapest), or the cheapest (ties:
// the least noise).
std::vector<int> Extreme(const std::vector<KnapsackItem>& items, bool least_noise) {
  std::vector<int> pick(items.size(), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& opts = items[i].options;
    for (size_t o = 1; o < opts.size(); ++o) {
      const auto& a = opts[o];
      const auto& b = opts[pick[i]];
      bool better = least_noise ? (a.noise < b.noise || (a.noise == b.noise && a.cost < b.cost))
                                : (a.cost < b.cost || (a.cost == b.cost && a.noise < b.noise));
      if (better) pick[i] = static_cast<int>(o);
    }
  }
  return pick;
}

// The DP over discretized costs: best[c] = least noise of a choice costing exactly c units.
class Table {
 public:
  Table(const std::vector<KnapsackItem>& items, const KnapsackOptions& options) : items_(items) {
    const double max_total = MaxTotalCost(items);
    unit_ = max_total > 0 ? max_total / std::max(1, options.cost_levels) : 1.0;
    units_.resize(items.size());
    int64_t total = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      int64_t most = 0;
      for (const KnapsackOption& o : items[i].options) {
        units_[i].push_back(static_cast<int64_t>(std::ceil(o.cost / unit_ - 1e-9)));
        most = std::max(most, units_[i].back());
      }
      total += most;
    }
    size_ = total + 1;
    fits_ = static_cast<int64_t>(items.size()) * size_ <= options.max_dp_cells;
    if (!fits_) return;
    best_.assign(size_, kInf);
    best_[0] = 0;
    arg_.assign(items.size(), std::vector<int8_t>(size_, -1));
    std::vector<double> next(size_);
    for (size_t i = 0; i < items.size(); ++i) {
      std::fill(next.begin(), next.end(), kInf);
      for (int64_t c = 0; c < size_; ++c) {
        if (best_[c] == kInf) continue;
        for (size_t o = 0; o < items[i].options.size(); ++o) {
          const int64_t to = c + units_[i][o];
          const double noise = best_[c] + items[i].options[o].noise;
          if (to < size_ && noise < next[to]) {
            next[to] = noise;
            arg_[i][to] = static_cast<int8_t>(o);
          }
        }
      }
      best_.swap(next);
    }
  }

  bool fits() const { return fits_; }
  int64_t BudgetUnits(double budget) const {
    if (budget >= kInf) return size_ - 1;
    return std::clamp<int64_t>(static_cast<int64_t>(std::floor(budget / unit_ + 1e-9)), -1,
                               size_ - 1);
  }
  // Least noise of the cells whose choice really costs at most `budget` (ties: cheaper);
  // -1 when none does. Cells within the discretized budget fit (costs were rounded up);
  // the items.size() cells above it hold choices that rounding pushed over (all int8 at
  // exactly 8 bits, say): their real cost decides.
  int64_t BestWithin(double budget) const {
    const int64_t limit = BudgetUnits(budget);
    const int64_t last = std::min<int64_t>(size_ - 1, limit + static_cast<int64_t>(items_.size()));
    int64_t at = -1;
    for (int64_t c = 0; c <= last; ++c) {
      if (best_[c] == kInf || (at >= 0 && best_[c] >= best_[at])) continue;
      if (c > limit && Evaluate(items_, Choice(c), true).cost > budget) continue;
      at = c;
    }
    return at;
  }
  // Cheapest cell with noise <= max_noise, or -1.
  int64_t CheapestWithin(double max_noise) const {
    for (int64_t c = 0; c < size_; ++c) {
      if (best_[c] <= max_noise) return c;
    }
    return -1;
  }
  std::vector<int> Choice(int64_t c) const {
    std::vector<int> option(items_.size(), 0);
    for (size_t i = items_.size(); i-- > 0;) {
      option[i] = arg_[i][c];
      c -= units_[i][option[i]];
    }
    return option;
  }

 private:
  const std::vector<KnapsackItem>& items_;
  double unit_ = 1;
  std::vector<std::vector<int64_t>> units_;
  int64_t size_ = 1;
  bool fits_ = false;
  std::vector<double> best_;
  std::vector<std::vector<int8_t>> arg_;
};

// Greedy: from `option`, applies the single-item change that `score` ranks best among those
// `allowed` accepts, until none is left. `score` returns NaN for moves it rejects.
template <typename Score>
void Walk(const std::vector<KnapsackItem>& items, std::vector<int>& option, Score score) {
  for (;;) {
    double best = kInf;
    size_t best_i = 0;
    int best_o = -1;
    KnapsackChoice now = Evaluate(items, option, false);
    for (size_t i = 0; i < items.size(); ++i) {
      const KnapsackOption& cur = items[i].options[option[i]];
      for (size_t o = 0; o < items[i].options.size(); ++o) {
        if (static_cast<int>(o) == option[i]) continue;
        const KnapsackOption& alt = items[i].options[o];
        double s = score(now, alt.cost - cur.cost, alt.noise - cur.noise);
        if (!std::isnan(s) && s < best) {
          best = s;
          best_i = i;
          best_o = static_cast<int>(o);
        }
      }
    }
    if (best_o < 0) return;
    option[best_i] = best_o;
  }
}

KnapsackChoice GreedyBudget(const std::vector<KnapsackItem>& items, double budget) {
  std::vector<int> option = Extreme(items, /*least_noise=*/true);
  // Downgrades: least added noise per cost saved, while over budget.
  Walk(items, option, [&](const KnapsackChoice& now, double dcost, double dnoise) {
    if (now.cost <= budget || dcost >= 0) return std::nan("");
    return dnoise / -dcost;
  });
  // Upgrades that still fit: the largest noise reduction first.
  Walk(items, option, [&](const KnapsackChoice& now, double dcost, double dnoise) {
    if (now.cost > budget || dnoise >= 0 || now.cost + dcost > budget) return std::nan("");
    return dnoise;
  });
  KnapsackChoice c = Evaluate(items, option, false);
  c.feasible = c.cost <= budget;
  return c;
}

KnapsackChoice GreedyMaxNoise(const std::vector<KnapsackItem>& items, double max_noise) {
  std::vector<int> option = Extreme(items, /*least_noise=*/true);
  Walk(items, option, [&](const KnapsackChoice& now, double dcost, double dnoise) {
    if (dcost >= 0 || now.noise + dnoise > max_noise) return std::nan("");
    return std::max(dnoise, 0.0) / -dcost;
  });
  KnapsackChoice c = Evaluate(items, option, false);
  c.feasible = c.noise <= max_noise;
  return c;
}

KnapsackChoice FromTable(const std::vector<KnapsackItem>& items, const Table& table,
                         double budget) {
  // The least-noise choice when it fits: rounding each cost up could otherwise lose it.
  KnapsackChoice best = Evaluate(items, Extreme(items, /*least_noise=*/true), true);
  if (best.cost <= budget) return best;
  const int64_t at = table.BestWithin(budget);
  if (at >= 0) return Evaluate(items, table.Choice(at), true);
  // Nothing fits the discretized budget: the cheapest choice, which may still fit the
  // real one (rounding up each cost can push it over).
  KnapsackChoice c = Evaluate(items, Extreme(items, /*least_noise=*/false), true);
  c.feasible = c.cost <= budget;
  return c;
}

}  // namespace

double NoiseToSqnrDb(double noise) { return noise > 0 ? -10.0 * std::log10(noise) : kInf; }
double SqnrDbToNoise(double db) {
  return std::isinf(db) && db > 0 ? 0.0 : std::pow(10.0, -db / 10.0);
}

double MinTotalCost(const std::vector<KnapsackItem>& items) {
  double total = 0;
  for (const auto& item : items) {
    double least = kInf;
    for (const auto& o : item.options) least = std::min(least, o.cost);
    total += least;
  }
  return total;
}

double MaxTotalCost(const std::vector<KnapsackItem>& items) {
  double total = 0;
  for (const auto& item : items) {
    double most = 0;
    for (const auto& o : item.options) most = std::max(most, o.cost);
    total += most;
  }
  return total;
}

KnapsackChoice SolveBudget(const std::vector<KnapsackItem>& items, double budget,
                           const KnapsackOptions& options) {
  Table table(items, options);
  if (!table.fits()) return GreedyBudget(items, budget);
  return FromTable(items, table, budget);
}

KnapsackChoice SolveMaxNoise(const std::vector<KnapsackItem>& items, double max_noise,
                             const KnapsackOptions& options) {
  Table table(items, options);
  if (!table.fits()) return GreedyMaxNoise(items, max_noise);
  const int64_t at = table.CheapestWithin(max_noise);
  if (at < 0) {
    KnapsackChoice c = Evaluate(items, Extreme(items, /*least_noise=*/true), true);
    c.feasible = false;
    return c;
  }
  return Evaluate(items, table.Choice(at), true);
}

std::vector<KnapsackChoice> Frontier(const std::vector<KnapsackItem>& items, int points,
                                     const KnapsackOptions& options) {
  Table table(items, options);
  const double low = MinTotalCost(items), high = MaxTotalCost(items);
  std::vector<KnapsackChoice> out;
  for (int p = 0; p < std::max(points, 2); ++p) {
    const double budget = low + (high - low) * p / (std::max(points, 2) - 1);
    out.push_back(table.fits() ? FromTable(items, table, budget) : GreedyBudget(items, budget));
  }
  return out;
}

}  // namespace qtune::quant
