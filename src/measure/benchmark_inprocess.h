// InProcessBenchmark: measures with qtune's own engine, in a `qtune measure-worker` child
// (measure_worker.h). The worker starts on the first Measure() and is kept, so the
// reference session stays loaded between candidates. A worker that does not answer
// within the timeout is killed (kTimeout); one that dies is reported (kCrash for a
// signal, kExit for an exit code); either way the next Measure() starts a fresh one.
// A worker that cannot be started at all is kExit with exit code 127, as a shell reports
// a missing program.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/benchmark.h"
#include "measure/subprocess.h"

namespace qtune::measure {

struct InProcessBenchmarkOptions {
  std::string worker_executable;  // the qtune binary (the CLI passes /proc/self/exe resolved)
  int threads = 1;                // intra-op threads of both sessions
  int warmup = 3;                 // untimed runs of each model before the first round
  int iters = 10;                 // timed runs per model per round
  // Sizes of inputs with symbolic dims (or to override static ones), by input name.
  std::map<std::string, std::vector<int64_t>> input_sizes;
  double timeout_s = 60;  // per Measure(): worker start, loading, compiling and all rounds
  uint64_t seed = 0;      // of the random inputs
};

class InProcessBenchmark : public Benchmark {
 public:
  // InvalidArgument for an empty worker_executable, threads < 1, warmup < 0, iters < 1.
  static StatusOr<std::unique_ptr<InProcessBenchmark>> Create(InProcessBenchmarkOptions options);

  Measurement Measure(const MeasureRequest& request) override;
  std::string Describe() const override;  // "inprocess (threads 1, warmup 3, 10 iters)"

  // The worker's pid (also its process group), 0 when none runs.
  int worker_pid() const { return worker_.pid(); }

 private:
  explicit InProcessBenchmark(InProcessBenchmarkOptions options);

  InProcessBenchmarkOptions options_;
  PersistentChild worker_;
};

}  // namespace qtune::measure
