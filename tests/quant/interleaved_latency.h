// Timing several models against each other on a shared machine, for the measured tables
// of docs/quantize.md: each model's time is its fastest run in process CPU time (a
// one-thread session's CPU time does not count the other processes' load, wall-clock
// time does), and the models take turns, so that a slow phase of the machine hits all.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/session.h"

namespace qtune::quant::testing {

// Process CPU time of a call, in milliseconds.
template <typename F>
double CpuMs(F&& f) {
  timespec a{}, b{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  f();
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  return (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
}

// Every graph gets a one-thread session and one warm-up run on `input_name` = `x`; then
// `rounds` rounds each run every model `runs` times in turn. Returns per graph its fastest
// run (CpuMs). Failures are test failures (EXPECT).
inline std::vector<double> InterleavedLatencyMs(const std::vector<const ir::Graph*>& graphs,
                                                const std::string& input_name, const Tensor& x,
                                                int rounds = 3, int runs = 4) {
  runtime::SessionOptions options;
  options.threads = 1;
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  runtime::NamedTensors inputs;
  inputs.emplace_back(input_name, x.Clone());
  std::vector<double> best(graphs.size(), 1e30);
  for (const ir::Graph* g : graphs) {
    auto session = runtime::Session::Create(*g, options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    if (!session.ok()) return best;
    EXPECT_TRUE((*session)->Run(inputs).ok());
    sessions.push_back(std::move(session).value());
  }
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < sessions.size(); ++i) {
      for (int k = 0; k < runs; ++k) {
        best[i] = std::min(best[i], CpuMs([&] { EXPECT_TRUE(sessions[i]->Run(inputs).ok()); }));
      }
    }
  }
  return best;
}

}  // namespace qtune::quant::testing
