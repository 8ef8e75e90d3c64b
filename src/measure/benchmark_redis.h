// RedisBenchmark: measures on `qtune worker`s reached through Redis Streams
// (redis_protocol.h, docs/workers.md). MeasureAll() uploads each candidate and reference
// once (by SHA-256; redis_upload.h), puts one job per request on the queue's stream, at most
// max_in_flight() at a time (the next one, its files written only then, as soon as a result
// frees a place), and collects the results from this tuner's own results stream by job id,
// as they come: with W workers, W jobs are measured at the same time. A request with a
// candidate_plan goes as its plan when every live worker builds plans (planned_model.h):
// its files are never written. Results carry the job id: one that
// arrives twice or late is ignored, so nothing is counted twice. Measure() is MeasureAll()
// of one.
//
// Failures, as every Benchmark reports them:
//   the worker's own result (crash, timeout, build, exit:N...)   as the worker says
//   no result within timeout_s + queue_wait_s after the batch's   kTimeout (job withdrawn)
//     last result (or its start): the queue stopped moving
//   Redis unreachable until then, or no live worker left         kConnection
//   no live worker serves the job's machine (a worker moved it     kConnection, with a
//     to the dead-letter stream, job_requeue.h)                    warning naming both
// After a lost connection the client reconnects with backoff and submits the jobs still in
// flight again (a restarted Redis may have lost them); the first result for a job id wins.
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
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/benchmark.h"
#include "measure/redis_client.h"
#include "measure/redis_protocol.h"
#include "measure/redis_upload.h"

namespace qtune::measure {

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
  // > 0: measure only on workers that measure with this many threads (`qtune tune` rows);
  // Create() fails when none announces itself.
  int threads = 0;
};

class RedisBenchmark : public Benchmark {
 public:
  // Unavailable (Redis unreachable), FailedPrecondition (wrong password, no worker),
  // InvalidArgument (bad URL or queue name).
  static StatusOr<std::unique_ptr<RedisBenchmark>> Create(RedisBenchmarkOptions options);
  ~RedisBenchmark() override;

  Measurement Measure(const MeasureRequest& request) override;
  void MeasureAll(std::deque<MeasureRequest>& requests, const OnMeasured& on_done) override;
  // "redis redis://host:6379/0 queue default (2 workers: a 12 jobs 1.3/s, b ...)"; no password.
  std::string Describe() const override;
  // "workers 2, in flight 1 of 2, w1 0.45/s, w2 0.44/s": live workers, jobs not answered
  // yet of the last batch handed to MeasureAll, each worker's measurements per second.
  std::string ProgressNote() const override;
  double transfer_seconds() const override { return transfer_s_; }
  bool may_build_plans() const override { return true; }
  // Bytes SET in Redis (skeletons, blobs, plans), models and plans uploaded, since Create().
  int64_t bytes_uploaded() const { return uploader_.bytes(); }
  int64_t models_uploaded() const { return uploader_.models(); }
  int64_t plans_uploaded() const { return uploader_.plans(); }
  // Whether every live worker builds planned models (at the last look): requests with a
  // candidate_plan are then shipped as plans.
  bool workers_build_plans() const { return workers_build_plans_; }

  // The machine every result must come from ("" with allow_mixed_workers).
  const std::string& required_machine() const { return required_machine_; }

 private:
  RedisBenchmark(RedisBenchmarkOptions options, RedisKeys keys, RedisUrl url);
  // Heartbeats of the live workers, by name (unreadable ones are skipped with a warning).
  StatusOr<std::map<std::string, WorkerHeartbeat>> LiveWorkers();
  Status ChooseMachine(const std::map<std::string, WorkerHeartbeat>& workers);
  // Puts `job` on the jobs stream; returns its entry id.
  StatusOr<std::string> Submit(const Job& job);
  Job MakeJob(const MeasureRequest& request);
  struct InFlight {
    Job job;
    size_t index = 0;      // into the requests of MeasureAll
    std::string entry_id;  // on the jobs stream ("" until submitted)
    int connect = -1;      // client_.connects() when submitted; -1: not yet
    // The candidate's and reference's paths, once the request's files are written.
    std::optional<std::pair<std::string, std::string>> paths;
  };
  // Writes (MeasureRequest::prepare) and uploads the models of every job in flight not
  // submitted on this connection yet, and submits them (again after a reconnect).
  // A job whose model file cannot be read is answered kUnparsable and removed; connection
  // errors (Unavailable, FailedPrecondition) are returned.
  Status SubmitAll(const std::deque<MeasureRequest>& requests,
                   std::map<std::string, InFlight>& jobs, const OnMeasured& on_done);
  // Reads what arrived on the results stream; answers jobs of `jobs` (removing them).
  // Returns how many were answered, or the connection error.
  StatusOr<int> CollectResults(std::map<std::string, InFlight>& jobs, const OnMeasured& on_done);
  void NoteResult(const JobResult& result);

  RedisBenchmarkOptions options_;
  RedisKeys keys_;
  RedisClient client_;
  RedisUploader uploader_;
  std::string tuner_id_;
  std::string required_machine_;
  std::set<std::string> refused_workers_;  // warned about once
  std::string last_result_id_ = "0-0";
  int64_t next_job_ = 0;
  struct WorkerStats {
    int jobs = 0;
    std::chrono::steady_clock::time_point first, last;
  };
  std::map<std::string, WorkerStats> worker_stats_;
  int workers_seen_ = 0;
  int workers_live_ = 0;  // at the last look
  bool workers_build_plans_ = false;
  int in_flight_ = 0;
  int batch_size_ = 0;     // requests of the last MeasureAll
  double transfer_s_ = 0;  // reading, hashing and uploading files
};

// The fingerprint of the machine whose latencies `benchmark` returns, for state logs: the
// workers' for Redis ("mixed workers" when it takes any), this one (ThisMachine(threads))
// for the in-process and command back ends (a command may reach another machine; that is
// the command's business).
std::string MeasuringMachine(const Benchmark& benchmark, int threads);

}  // namespace qtune::measure
