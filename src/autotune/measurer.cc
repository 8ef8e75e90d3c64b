#include "autotune/measurer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace qtune::autotune {

Comparison CompareRounds(const std::vector<double>& candidate_ms,
                         const std::vector<double>& reference_ms) {
  Comparison c;
  c.ok = true;
  c.candidate_ms = Median(candidate_ms);
  c.reference_ms = Median(reference_ms);
  std::vector<double> ratios;
  for (size_t i = 0; i < candidate_ms.size() && i < reference_ms.size(); ++i) {
    if (reference_ms[i] > 0) ratios.push_back(candidate_ms[i] / reference_ms[i]);
  }
  if (ratios.empty()) return c;
  c.ratio = Median(ratios);
  auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  c.noise = (*hi - *lo) / 2.0;
  return c;
}

Comparison CombineComparisons(const Comparison& a, const Comparison& b) {
  Comparison c = a;
  c.ratio = (a.ratio + b.ratio) / 2.0;
  c.noise = std::max({a.noise, b.noise, std::abs(a.ratio - b.ratio) / 2.0});
  c.candidate_ms = (a.candidate_ms + b.candidate_ms) / 2.0;
  c.reference_ms = (a.reference_ms + b.reference_ms) / 2.0;
  c.replayed = a.replayed && b.replayed;
  return c;
}

Measurer::Measurer(Benchmark& benchmark, StateLog& log, MeasurerOptions options)
    : benchmark_(benchmark), log_(log), options_(options) {
  for (const MeasurementRecord& record : log.replayed()) {
    if (record.ok) {
      replay_ok_[record.key] = record;
    } else {
      ++replay_failed_[record.key];
    }
  }
}

StatusOr<Comparison> Measurer::Compare(const std::string& key, const std::string& pattern,
                                       const std::string& scheme, const FileWriter& write_files) {
  if (auto it = replay_ok_.find(key); it != replay_ok_.end()) {
    ++counters_.replayed;
    Comparison c = CompareRounds(it->second.candidate_ms, it->second.reference_ms);
    c.replayed = true;
    return c;
  }
  if (replay_failed_.count(key)) ++counters_.retried_from_log;
  ASSIGN_OR_RETURN(auto paths, write_files());
  MeasureRequest request{paths.first, paths.second, options_.rounds};
  Measurement m;
  int attempts = 0;
  for (;;) {
    ++attempts;
    m = benchmark_.Measure(request);
    if (m.ok() || !IsTransient(m.failure) || attempts > options_.retries) break;
    ++counters_.retried;
    const int shift = std::min(attempts - 1, 3);  // at most 8x the first backoff
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.backoff_ms << shift));
  }
  MeasurementRecord record;
  record.key = key;
  record.pattern = pattern;
  record.scheme = scheme;
  record.ok = m.ok();
  record.candidate_ms = m.candidate_ms;
  record.reference_ms = m.reference_ms;
  record.attempts = attempts;
  if (!m.ok()) {
    record.error_kind = FailureKindName(m.failure, m.exit_code);
    record.error_detail = m.detail.substr(0, 2000);
  }
  RETURN_IF_ERROR(log_.Append(record));
  if (!m.ok()) {
    ++counters_.failed;
    Comparison c;
    c.error = record.error_kind + (m.detail.empty() ? "" : ": " + m.detail.substr(0, 300));
    return c;
  }
  ++counters_.measured;
  replay_ok_[key] = record;
  return CompareRounds(m.candidate_ms, m.reference_ms);
}

}  // namespace qtune::autotune
