#include "autotune/measurer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

namespace qtune::autotune {

Comparison CompareRounds(const std::vector<double>& candidate_ms,
                         const std::vector<double>& reference_ms) {
  Comparison c;
  c.ok = true;
  c.candidate_ms = measure::Median(candidate_ms);
  c.reference_ms = measure::Median(reference_ms);
  std::vector<double> ratios;
  for (size_t i = 0; i < candidate_ms.size() && i < reference_ms.size(); ++i) {
    if (reference_ms[i] > 0) ratios.push_back(candidate_ms[i] / reference_ms[i]);
  }
  if (ratios.empty()) return c;
  c.ratio = measure::Median(ratios);
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

Measurer::Measurer(measure::Benchmark& benchmark, measure::StateLog& log, MeasurerOptions options)
    : benchmark_(benchmark), log_(log), options_(options) {
  for (const measure::MeasurementRecord& record : log.replayed()) {
    if (record.ok) {
      replay_ok_[record.key] = record;
    } else {
      ++replay_failed_[record.key];
    }
  }
}

StatusOr<Comparison> Measurer::Compare(const measure::MeasurementKey& key,
                                       const std::string& pattern, const std::string& scheme,
                                       const FileWriter& write_files) {
  const Request request{key, pattern, scheme, write_files};
  ASSIGN_OR_RETURN(std::vector<Comparison> results, CompareMany(std::span(&request, 1)));
  return results.front();
}

StatusOr<std::vector<Comparison>> Measurer::CompareMany(std::span<const Request> requests) {
  std::deque<Request> queue(requests.begin(), requests.end());
  std::vector<Comparison> out(requests.size());
  RETURN_IF_ERROR(CompareAll(queue, [&out](size_t i, const Comparison& c) { out[i] = c; }));
  return out;
}

std::optional<Comparison> Measurer::Replayed(const Request& request) {
  const std::string key = request.key.ToString();
  auto it = replay_ok_.find(key);
  if (it == replay_ok_.end()) {
    if (replay_failed_.count(key) && !request.speculative) ++counters_.retried_from_log;
    return std::nullopt;
  }
  Comparison c = CompareRounds(it->second.candidate_ms, it->second.reference_ms);
  if (request.speculative) return c;        // known already: nothing to measure ahead
  if (speculated_unused_.erase(key) > 0) {  // measured ahead in this run: used now
    ++counters_.measured;
    ++counters_.speculation_used;
    c.ahead = true;
    return c;
  }
  ++counters_.replayed;
  c.replayed = true;
  return c;
}

measure::MeasurementRecord Measurer::RecordOf(const Request& request, const measure::Measurement& m,
                                              int attempts) {
  measure::MeasurementRecord record;
  record.key = request.key.ToString();
  record.pattern = request.pattern;
  record.scheme = request.scheme;
  record.ok = m.ok();
  record.candidate_ms = m.candidate_ms;
  record.reference_ms = m.reference_ms;
  record.attempts = attempts;
  if (!m.ok()) {
    record.error_kind = measure::FailureKindName(m.failure, m.exit_code);
    record.error_detail = m.detail.substr(0, 2000);
  }
  return record;
}

Status Measurer::CompareAll(std::deque<Request>& requests, const OnCompared& on_compared) {
  // Every request goes to the benchmark at once; it keeps at most max_in_flight measuring
  // and writes each one's files (write_files) only when it hands that one out, so the
  // tuner prepares the next candidate while the others are measured. A write error is
  // the run's error (after the stream), not a failed measurement.
  benchmark_.set_max_in_flight(options_.max_in_flight);
  // Per request, grown as requests are appended (a deque: references stay valid).
  std::deque<std::optional<std::pair<std::string, std::string>>> paths;
  std::deque<char> write_failed;
  Status write_error = Status::Ok();
  Status log_error = Status::Ok();
  std::deque<measure::MeasureRequest> pending;  // pending[j] measures requests[index[j]]
  std::vector<size_t> index;
  size_t seen = 0;  // requests[0, seen) are answered or pending
  auto measure_request = [&](size_t i) {
    measure::MeasureRequest m;
    m.rounds = options_.rounds;
    m.candidate_plan = requests[i].candidate_plan;
    m.reference_plan = requests[i].reference_plan;
    m.prepare = [this, &requests, &paths, &write_failed, &write_error,
                 i]() -> std::pair<std::string, std::string> {
      if (!paths[i].has_value()) {
        const auto started = std::chrono::steady_clock::now();
        StatusOr<std::pair<std::string, std::string>> written = requests[i].write_files();
        timing_.prepare_s +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        ++timing_.prepared;
        if (!written.ok()) {
          if (write_error.ok()) write_error = written.status();
          write_failed[i] = 1;
          paths[i].emplace();
        } else {
          paths[i] = std::move(*written);
        }
      }
      return *paths[i];
    };
    return m;
  };
  // Takes in the requests not seen yet, appended ones too: a replayed one is answered at
  // once (its on_compared may append more), the others join what is being measured.
  auto take_new = [&] {
    while (seen < requests.size()) {
      const size_t i = seen++;
      paths.emplace_back();
      write_failed.push_back(0);
      if (std::optional<Comparison> c = Replayed(requests[i])) {
        on_compared(i, *c);
        continue;
      }
      pending.push_back(measure_request(i));
      index.push_back(i);
    }
  };
  take_new();
  const auto measuring = std::chrono::steady_clock::now();
  const double transfer_before = benchmark_.transfer_seconds();
  const double prepare_before = timing_.prepare_s;
  for (int attempts = 1; !pending.empty(); ++attempts) {
    if (attempts > 1) {
      const int shift = std::min(attempts - 2, 3);  // at most 8x the first backoff
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.backoff_ms << shift));
    }
    std::deque<measure::MeasureRequest> retry;
    std::vector<size_t> retry_index;
    benchmark_.MeasureAll(pending, [&](size_t j, measure::Measurement m) {
      const size_t i = index[j];
      Comparison c;
      if (write_failed[i]) {  // nothing was measured: the run fails with write_error
        c.error = "the candidate could not be written";
      } else if (requests[i].speculative) {
        ++counters_.speculated;
        if (m.ok()) {
          const measure::MeasurementRecord record = RecordOf(requests[i], m, attempts);
          Status appended = log_.Append(record);
          if (!appended.ok() && log_error.ok()) log_error = appended;
          replay_ok_[record.key] = record;
          speculated_unused_.insert(record.key);
          c = CompareRounds(m.candidate_ms, m.reference_ms);
        } else {
          c.error = measure::FailureKindName(m.failure, m.exit_code);
        }
      } else if (!m.ok() && measure::IsTransient(m.failure) && attempts <= options_.retries) {
        ++counters_.retried;
        retry.push_back(pending[j]);
        retry_index.push_back(i);
        return;
      } else {
        const measure::MeasurementRecord record = RecordOf(requests[i], m, attempts);
        Status appended = log_.Append(record);
        if (!appended.ok() && log_error.ok()) log_error = appended;
        if (m.ok()) {
          ++counters_.measured;
          replay_ok_[record.key] = record;
          c = CompareRounds(m.candidate_ms, m.reference_ms);
        } else {
          ++counters_.failed;
          c.error = record.error_kind + (m.detail.empty() ? "" : ": " + m.detail.substr(0, 300));
        }
      }
      on_compared(i, c);
      take_new();
    });
    RETURN_IF_ERROR(write_error);
    RETURN_IF_ERROR(log_error);
    pending = std::move(retry);
    index = std::move(retry_index);
  }
  timing_.transfer_s += benchmark_.transfer_seconds() - transfer_before;
  // The measuring wall time, less what this process spent writing and uploading meanwhile.
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - measuring).count();
  timing_.measure_wall_s += std::max(0.0, wall - (timing_.prepare_s - prepare_before) -
                                              (benchmark_.transfer_seconds() - transfer_before));
  return Status::Ok();
}

}  // namespace qtune::autotune
