// Measurer: candidate-versus-reference measurements with everything around them that
// makes a search safe to interrupt: results already in the state log are replayed instead
// of measured, transient failures are retried with backoff, and every finished
// measurement (success or failure) is appended to the log as it completes, before it is
// used, so a kill loses only the measurements in flight.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/benchmark.h"
#include "measure/state_log.h"

namespace qtune::autotune {

struct MeasurerOptions {
  int rounds = 3;         // alternations per measurement
  int retries = 2;        // extra attempts for transient failures (timeout, crash, connection)
  int backoff_ms = 100;   // before retry k: backoff_ms * 2^min(k-1, 3)
  int max_in_flight = 1;  // measurements in flight at once (Benchmark::set_max_in_flight)
};

// A measurement of a candidate against a reference. ratio = median over rounds of
// candidate / reference; noise = half the spread of those per-round ratios.
struct Comparison {
  bool ok = false;
  std::string error;  // FailureKindName + detail when !ok
  double ratio = 1.0;
  double noise = 0.0;
  double candidate_ms = 0.0;  // medians
  double reference_ms = 0.0;
  bool replayed = false;  // taken from the state log
  bool ahead = false;     // measured earlier in this run by a speculative request
};

struct MeasurerCounters {
  int measured = 0;          // benchmark runs that succeeded
  int replayed = 0;          // results taken from the state log
  int failed = 0;            // measurements that failed after retries
  int retried = 0;           // extra attempts made
  int retried_from_log = 0;  // keys whose logged attempt had failed, measured again now
  // Speculative requests (Request::speculative) measured ahead, and how many of those a
  // later request of the same key used (counted as measured then, not as replayed).
  int speculated = 0;
  int speculation_used = 0;
};

// Where the tuner's time went around the measurements (seconds).
struct MeasurerTiming {
  int prepared = 0;           // candidates whose files were written
  double prepare_s = 0;       // writing them (write_files: export, serialize, write)
  double transfer_s = 0;      // the back end's reading, hashing, uploading (Redis)
  double measure_wall_s = 0;  // waiting for results, less the two above
};

class Measurer {
 public:
  // Borrows both; they must outlive the measurer.
  Measurer(measure::Benchmark& benchmark, measure::StateLog& log, MeasurerOptions options);

  // `key` identifies the pair measured (same key = same files by content). `write_files`
  // is called only when a real measurement is needed; it writes the candidate and the
  // reference and returns their paths (candidate, reference; reference may be empty).
  using FileWriter = std::function<StatusOr<std::pair<std::string, std::string>>()>;
  StatusOr<Comparison> Compare(const measure::MeasurementKey& key, const std::string& pattern,
                               const std::string& scheme, const FileWriter& write_files);

  struct Request {
    measure::MeasurementKey key;
    std::string pattern, scheme;
    FileWriter write_files;
    // The same candidate and reference as plans (MeasureRequest::candidate_plan): a back
    // end whose measurers build plans never calls write_files.
    std::optional<measure::PlannedModel> candidate_plan, reference_plan;
    // Measured ahead, on a guess, by a measurer that would otherwise be idle: logged when
    // it succeeds, never retried, and not counted until a request of the same key uses it
    // (that one is answered at once, as measured, not replayed). A failure is dropped.
    bool speculative = false;
  };
  // Compare() for several pairs at once: the replayed ones come from the log, the others
  // go to Benchmark::MeasureAll together, at most max_in_flight measuring at a time, each
  // one's write_files called only when the back end hands it out (transient failures are
  // retried together, after the backoff). Each is logged as it completes. Results in the
  // order of `requests`; the error is the first failed write_files or log append.
  StatusOr<std::vector<Comparison>> CompareMany(std::span<const Request> requests);

  // CompareMany as a stream: `on_compared(i, c)` is called once per request i with its
  // final result (replayed, measured, or failed after its retries), in completion order,
  // and may append follow-up requests to `requests`, which are measured in the same
  // stream behind those waiting (they fill the measurers the others leave idle).
  using OnCompared = std::function<void(size_t index, const Comparison& comparison)>;
  Status CompareAll(std::deque<Request>& requests, const OnCompared& on_compared);

  const MeasurerCounters& counters() const { return counters_; }
  const MeasurerTiming& timing() const { return timing_; }
  int rounds() const { return options_.rounds; }
  // How many measurements may be in flight at once (MeasurerOptions::max_in_flight).
  int max_in_flight() const { return options_.max_in_flight; }
  measure::Benchmark& benchmark() { return benchmark_; }

 private:
  // The result of requests[i] when the log has it (counted as replayed).
  std::optional<Comparison> Replayed(const Request& request);
  // The state-log record of a finished measurement of `request`.
  static measure::MeasurementRecord RecordOf(const Request& request, const measure::Measurement& m,
                                             int attempts);

  measure::Benchmark& benchmark_;
  measure::StateLog& log_;
  MeasurerOptions options_;
  std::map<std::string, measure::MeasurementRecord> replay_ok_;  // successful records by key
  std::map<std::string, int> replay_failed_;                     // failed records by key
  std::set<std::string> speculated_unused_;  // keys measured ahead, not used yet
  MeasurerCounters counters_;
  MeasurerTiming timing_;
};

// Two measurements of the same pair as one: mean ratio; noise = the larger noise or half
// their disagreement. REQUIRES: both ok.
Comparison CombineComparisons(const Comparison& a, const Comparison& b);

// Ratio and noise of one record's per-round medians (reference-less: ratio 1, noise 0).
Comparison CompareRounds(const std::vector<double>& candidate_ms,
                         const std::vector<double>& reference_ms);

}  // namespace qtune::autotune
