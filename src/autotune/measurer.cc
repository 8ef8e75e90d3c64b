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
  std::vector<Comparison> out(requests.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::string key = requests[i].key.ToString();
    if (auto it = replay_ok_.find(key); it != replay_ok_.end()) {
      ++counters_.replayed;
      out[i] = CompareRounds(it->second.candidate_ms, it->second.reference_ms);
      out[i].replayed = true;
      continue;
    }
    if (replay_failed_.count(key)) ++counters_.retried_from_log;
    todo.push_back(i);
  }
  if (!todo.empty()) RETURN_IF_ERROR(MeasureGroup(requests, todo, out));
  return out;
}

Status Measurer::MeasureGroup(std::span<const Request> requests, const std::vector<size_t>& todo,
                              std::vector<Comparison>& out) {
  // Every request goes to the benchmark at once; it keeps at most max_in_flight measuring
  // and writes each one's files (write_files) only when it hands that one out, so the
  // tuner prepares the next candidate while the others are measured. A write error is
  // the run's error (after the batch), not a failed measurement.
  benchmark_.set_max_in_flight(options_.max_in_flight);
  std::vector<std::optional<std::pair<std::string, std::string>>> paths(requests.size());
  std::vector<char> write_failed(requests.size(), 0);
  Status write_error = Status::Ok();
  std::vector<measure::MeasureRequest> pending;  // pending[j] measures requests[index[j]]
  std::vector<size_t> index;
  for (size_t i : todo) {
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
    pending.push_back(std::move(m));
    index.push_back(i);
  }
  Status log_error = Status::Ok();
  const auto measuring = std::chrono::steady_clock::now();
  const double transfer_before = benchmark_.transfer_seconds();
  const double prepare_before = timing_.prepare_s;
  for (int attempts = 1; !pending.empty(); ++attempts) {
    if (attempts > 1) {
      const int shift = std::min(attempts - 2, 3);  // at most 8x the first backoff
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.backoff_ms << shift));
    }
    std::vector<measure::MeasureRequest> retry;
    std::vector<size_t> retry_index;
    benchmark_.MeasureMany(pending, [&](size_t j, measure::Measurement m) {
      const Request& request = requests[index[j]];
      Comparison& c = out[index[j]];
      if (write_failed[index[j]]) {  // nothing was measured: the run fails with write_error
        c = Comparison{};
        c.error = "the candidate could not be written";
        return;
      }
      if (!m.ok() && measure::IsTransient(m.failure) && attempts <= options_.retries) {
        ++counters_.retried;
        retry.push_back(pending[j]);
        retry_index.push_back(index[j]);
        return;
      }
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
      Status appended = log_.Append(record);
      if (!appended.ok() && log_error.ok()) log_error = appended;
      if (!m.ok()) {
        ++counters_.failed;
        c = Comparison{};
        c.error = record.error_kind + (m.detail.empty() ? "" : ": " + m.detail.substr(0, 300));
        return;
      }
      ++counters_.measured;
      replay_ok_[record.key] = record;
      c = CompareRounds(m.candidate_ms, m.reference_ms);
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
