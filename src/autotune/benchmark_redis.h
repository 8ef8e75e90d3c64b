// RedisBenchmark: measures on `qtune worker`s reached through Redis Streams
// (redis_protocol.h, docs/workers.md). Measure() uploads the candidate and reference
// bytes once each (by SHA-256), puts a job on the queue's stream and waits for its result
// on this tuner's own results stream. Results carry the job id: one that arrives twice or
// late is ignored, so nothing is counted twice.
//
// Failures, as every Benchmark reports them:
//   the worker's own result (crash, timeout, build, exit:N...)   as the worker says
//   no result within timeout_s + queue_wait_s                    kTimeout (job withdrawn)
//   Redis unreachable until then, or no live worker left         kConnection
// After a lost connection the client reconnects with backoff and submits the job again
// (a restarted Redis may have lost it); the first result for the job id wins.
//
// Create() is the connectivity pre-check: it fails within seconds, with what to do, when
// Redis cannot be reached or no worker announces itself on the queue within
// worker_wait_s. Workers whose machine fingerprint (CPU model, ISA, threads, version)
// differs from the first worker's are refused (their jobs are bounced to the others)
// unless allow_mixed_workers.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "autotune/benchmark.h"
#include "autotune/redis_client.h"
#include "autotune/redis_protocol.h"
#include "core/status.h"

namespace qtune::autotune {

struct RedisBenchmarkOptions {
  std::string url;  // redis://[:PASSWORD@]HOST[:PORT][/DB]
  std::string queue = "default";
  int warmup = 3;
  int iters = 10;
  std::map<std::string, std::vector<int64_t>> input_sizes;
  uint64_t seed = 0;
  double timeout_s = 60;      // per measurement on the worker
  double queue_wait_s = 60;   // extra wait for a worker to take the job (and reclaims)
  double worker_wait_s = 10;  // pre-check: how long to wait for a worker's heartbeat
  bool allow_mixed_workers = false;
};

class RedisBenchmark : public Benchmark {
 public:
  // Unavailable (Redis unreachable), FailedPrecondition (wrong password, no worker),
  // InvalidArgument (bad URL or queue name).
  static StatusOr<std::unique_ptr<RedisBenchmark>> Create(RedisBenchmarkOptions options);
  ~RedisBenchmark() override;

  Measurement Measure(const MeasureRequest& request) override;
  // "redis redis://host:6379/0 queue default (2 workers: a 12 jobs 1.3/s, b ...)"; no password.
  std::string Describe() const override;

  // The machine every result must come from ("" with allow_mixed_workers).
  const std::string& required_machine() const { return required_machine_; }

 private:
  RedisBenchmark(RedisBenchmarkOptions options, RedisKeys keys, RedisUrl url);
  // Heartbeats of the live workers, by name (unreadable ones are skipped with a warning).
  StatusOr<std::map<std::string, WorkerHeartbeat>> LiveWorkers();
  Status ChooseMachine(const std::map<std::string, WorkerHeartbeat>& workers);
  // Puts the model's bytes under its SHA-256 (once per connection), returns the SHA.
  StatusOr<std::string> Upload(const std::string& path);
  // Puts `job` on the jobs stream; returns its entry id.
  StatusOr<std::string> Submit(const Job& job);
  Measurement Wait(const Job& job, const MeasureRequest& request);
  void NoteResult(const JobResult& result);

  RedisBenchmarkOptions options_;
  RedisKeys keys_;
  RedisClient client_;
  std::string tuner_id_;
  std::string required_machine_;
  std::set<std::string> refused_workers_;        // warned about once
  std::map<std::string, std::string> uploaded_;  // path -> sha256 this connection
  int uploaded_on_connect_ = -1;                 // client_.connects() when uploaded_ was filled
  std::string last_result_id_ = "0-0";
  int64_t next_job_ = 0;
  struct WorkerStats {
    int jobs = 0;
    std::chrono::steady_clock::time_point first, last;
  };
  std::map<std::string, WorkerStats> worker_stats_;
  int workers_seen_ = 0;
};

}  // namespace qtune::autotune
