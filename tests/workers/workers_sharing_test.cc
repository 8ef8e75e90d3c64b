// Several tuners on one pool of workers (issue 25 item 6): two tuners, each keeping two
// jobs in flight on one queue served by two `qtune worker`s whose device takes 0.3 s a job,
// both finish, and the pool is shared fairly between them: jobs are served in the order
// they were queued (one Redis stream, one consumer group), and a tuner never has more than
// its max_in_flight queued, so neither can crowd the other out however many it has left.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "measure/benchmark_redis.h"
#include "workers/worker_pool_fixture.h"

namespace qtune::measure {
namespace {

class WorkersSharingTest : public qtune::testing::WorkerPoolTest {
 protected:
  WorkersSharingTest() : WorkerPoolTest("qtune_workers_sharing_") {}
};

TEST_F(WorkersSharingTest, TwoTunersOnOnePoolBothFinishWithFairShares) {
  // The simulated device: 0.3 s a job, no CPU, the latency a function of the file.
  std::ofstream(dir_ / "fast.sh") << "sleep 0.3\n" << qtune::testing::kLatencyOfFileScript;
  StartRedis();
  StartWorker("w1");
  StartWorker("w2");
  constexpr int kJobs = 10;
  struct Tuner {
    std::unique_ptr<RedisBenchmark> bench;
    std::vector<MeasureRequest> requests;
    std::vector<Clock::time_point> done;  // completion times, in completion order
    int ok = 0;
  };
  Tuner tuners[2];
  for (int t = 0; t < 2; ++t) {
    tuners[t].bench = Bench();
    ASSERT_NE(tuners[t].bench, nullptr);
    tuners[t].bench->set_max_in_flight(2);
    for (int j = 0; j < kJobs; ++j) {  // distinct files: nothing is deduplicated
      MeasureRequest r;
      r.candidate_path = ModelVariant("t" + std::to_string(t) + "_" + std::to_string(j) + ".onnx",
                                      static_cast<char>('a' + j));
      r.rounds = 1;
      tuners[t].requests.push_back(r);
    }
  }
  std::mutex mu;
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (Tuner& tuner : tuners) {
    threads.emplace_back([&] {
      tuner.bench->MeasureMany(tuner.requests, [&](size_t, Measurement m) {
        std::lock_guard<std::mutex> lock(mu);
        tuner.done.push_back(Clock::now());
        tuner.ok += m.ok() ? 1 : 0;
      });
    });
  }
  for (std::thread& t : threads) t.join();
  const double wall = Seconds(start);

  for (const Tuner& tuner : tuners) {
    EXPECT_EQ(tuner.ok, kJobs);
    ASSERT_EQ(tuner.done.size(), static_cast<size_t>(kJobs));
  }
  // 20 jobs of 0.3 s on 2 workers: about 3.3 s here; 10 s only bounds a stall.
  std::printf("2 tuners x %d jobs on 2 workers: %.2f s\n", kJobs, wall);
  EXPECT_LT(wall, 10.0) << "the pool was not kept busy";
  // Fair: when the first tuner is done, the other has had at least 70% of its jobs served
  // (strict alternation gives kJobs - 2; one tuner first, then the other, gives 0).
  const Clock::time_point first_done = std::min(tuners[0].done.back(), tuners[1].done.back());
  for (const Tuner& tuner : tuners) {
    const auto served = std::count_if(tuner.done.begin(), tuner.done.end(),
                                      [&](Clock::time_point at) { return at <= first_done; });
    EXPECT_GE(served, kJobs * 7 / 10) << "one tuner crowded the other out";
  }
}

}  // namespace
}  // namespace qtune::measure
