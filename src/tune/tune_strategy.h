// How `qtune tune` picks one row of its table (docs/tune.md, "strategies").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"
#include "tune/tune.h"

namespace qtune::tune {

struct TuneStrategy {
  enum class Kind { kMinLatency, kMaxThroughput, kFirstWins, kLatencyBudget };
  Kind kind = Kind::kMinLatency;
  double budget_ms = 0;  // kLatencyBudget
};

// "min-latency", "max-throughput", "first-wins", "latency-budget=MS" (MS > 0).
// InvalidArgument listing the choices otherwise.
StatusOr<TuneStrategy> ParseTuneStrategy(const std::string& text);

// Index of the row `strategy` picks among the passed rows, or rows.size() when none passed.
//   min-latency: lowest latency; max-throughput: highest per-core throughput;
//   first-wins: the first passed row; latency-budget: the highest SQNR among rows within
//   the budget (ties: lower latency), else min-latency, saying so in `*note`.
// Ties keep the earlier row.
size_t PickTuneRow(const std::vector<TuneRow>& rows, const TuneStrategy& strategy,
                   std::string* note);

}  // namespace qtune::tune
