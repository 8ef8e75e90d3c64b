#include "runtime/benchmark.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace qtune::runtime {

double PercentileOfSorted(const std::vector<double>& sorted, double p) {
  size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

StatusOr<LatencyStats> MeasureLatency(Session& session, const NamedTensors& inputs,
                                      const LatencyOptions& options) {
  if (options.warmup < 0 || options.iters < 1) {
    return InvalidArgumentError("latency measurement needs warmup >= 0 and iters >= 1, got " +
                                std::to_string(options.warmup) + " and " +
                                std::to_string(options.iters));
  }
  LatencyStats stats;
  stats.times_ms.reserve(static_cast<size_t>(options.iters));
  for (int i = 0; i < options.warmup + options.iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    StatusOr<NamedTensors> outputs = session.Run(inputs);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!outputs.ok()) return outputs.status();
    if (i >= options.warmup) stats.times_ms.push_back(ms);
  }
  std::vector<double> sorted = stats.times_ms;
  std::sort(sorted.begin(), sorted.end());
  stats.median_ms = PercentileOfSorted(sorted, 0.5);
  stats.p90_ms = PercentileOfSorted(sorted, 0.9);
  stats.p99_ms = PercentileOfSorted(sorted, 0.99);
  stats.min_ms = sorted.front();
  return stats;
}

}  // namespace qtune::runtime
