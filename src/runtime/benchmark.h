// MeasureLatency: the timing loop behind `qtune bench` and the autotuner's measure worker.
// `warmup` untimed runs, then `iters` timed runs of Session::Run on the same inputs, each
// timed with the steady clock (host wall time around one Run call).
#pragma once

#include <vector>

#include "core/status.h"
#include "runtime/session.h"

namespace qtune::runtime {

struct LatencyOptions {
  int warmup = 5;  // untimed runs first (>= 0)
  int iters = 50;  // timed runs (>= 1)
};

struct LatencyStats {
  double median_ms = 0;  // the upper middle value for an even count (as `qtune bench` prints)
  double p90_ms = 0;
  double p99_ms = 0;
  double min_ms = 0;
  std::vector<double> times_ms;  // every timed run, in run order
};

// Returns the first Run error as it is (it names the input). InvalidArgument for
// warmup < 0 or iters < 1. The session compiles its plan on the first run; call
// Session::Prepare first to keep that out of a warmup-free measurement.
StatusOr<LatencyStats> MeasureLatency(Session& session, const NamedTensors& inputs,
                                      const LatencyOptions& options);

// The value at fraction p (0..1) of `sorted` (nearest rank, rounding up at .5).
// REQUIRES: !sorted.empty(), sorted ascending.
double PercentileOfSorted(const std::vector<double>& sorted, double p);

}  // namespace qtune::runtime
