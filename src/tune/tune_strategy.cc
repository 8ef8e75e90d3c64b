#include "tune/tune_strategy.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace qtune::tune {

StatusOr<TuneStrategy> ParseTuneStrategy(const std::string& text) {
  TuneStrategy s;
  if (text == "min-latency") return s;
  if (text == "max-throughput") {
    s.kind = TuneStrategy::Kind::kMaxThroughput;
    return s;
  }
  if (text == "first-wins") {
    s.kind = TuneStrategy::Kind::kFirstWins;
    return s;
  }
  const std::string prefix = "latency-budget=";
  if (text.rfind(prefix, 0) == 0) {
    const std::string number = text.substr(prefix.size());
    char* end = nullptr;
    double ms = std::strtod(number.c_str(), &end);
    if (!number.empty() && end == number.c_str() + number.size() && std::isfinite(ms) && ms > 0) {
      s.kind = TuneStrategy::Kind::kLatencyBudget;
      s.budget_ms = ms;
      return s;
    }
    return InvalidArgumentError(
        fmt::format("--strategy '{}': the budget must be a positive number of milliseconds, e.g. "
                    "latency-budget=2.5",
                    text));
  }
  return InvalidArgumentError(
      fmt::format("--strategy '{}' is unknown: use min-latency, max-throughput, first-wins or "
                  "latency-budget=MS",
                  text));
}

namespace {

size_t MinLatency(const std::vector<TuneRow>& rows) {
  size_t best = rows.size();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].status != TuneRow::Status::kPassed) continue;
    if (best == rows.size() || rows[i].latency_ms < rows[best].latency_ms) best = i;
  }
  return best;
}

}  // namespace

size_t PickTuneRow(const std::vector<TuneRow>& rows, const TuneStrategy& strategy,
                   std::string* note) {
  const size_t none = rows.size();
  switch (strategy.kind) {
    case TuneStrategy::Kind::kMinLatency:
      return MinLatency(rows);
    case TuneStrategy::Kind::kMaxThroughput: {
      size_t best = none;
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].status != TuneRow::Status::kPassed) continue;
        if (best == none || rows[i].throughput > rows[best].throughput) best = i;
      }
      return best;
    }
    case TuneStrategy::Kind::kFirstWins:
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].status == TuneRow::Status::kPassed) return i;
      }
      return none;
    case TuneStrategy::Kind::kLatencyBudget: {
      size_t best = none;
      auto sqnr = [&](size_t i) {
        return rows[i].sqnr_db.value_or(-std::numeric_limits<double>::infinity());
      };
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].status != TuneRow::Status::kPassed) continue;
        if (rows[i].latency_ms > strategy.budget_ms) continue;
        if (best == none || sqnr(i) > sqnr(best) ||
            (sqnr(i) == sqnr(best) && rows[i].latency_ms < rows[best].latency_ms)) {
          best = i;
        }
      }
      if (best != none) return best;
      best = MinLatency(rows);
      if (best != none && note != nullptr) {
        *note = fmt::format("no passing row within {} ms: picked the fastest (min-latency)",
                            strategy.budget_ms);
      }
      return best;
    }
  }
  return none;
}

}  // namespace qtune::tune
