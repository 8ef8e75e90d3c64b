// `qtune worker`: serves measurement jobs from a Redis stream (redis_protocol.h,
// docs/workers.md) until stopped.
//
// Loop: take a job, first one another worker left pending longer than the lease
// (XAUTOCLAIM: a worker killed mid-job loses nothing), else a new one (XREADGROUP);
// fetch the models by SHA-256 (verified) into the cache directory; measure; post the
// result on the job's results stream; acknowledge and delete the job. A job for another
// machine fingerprint is put back on the stream for the others, for a bounded time
// (job_requeue.h): one that no live worker can take goes to the dead-letter stream
// qtune:<queue>:dead and its tuner is answered with a `connection` failure.
//
// Measuring happens in a child process (the in-process back end's `qtune measure-worker`,
// or the --benchmark-command tool), so a model that crashes or hangs the engine costs a
// restart of the child and is answered as `crash` / `timeout`; the worker keeps serving.
// A job that cannot be parsed, or whose model bytes are missing or do not match their
// SHA-256, is rejected with a logged reason (and answered `unparsable` when it says where
// to answer). A lost Redis connection is retried with backoff; the worker outlives Redis
// restarts. A heartbeat thread (own connection) refreshes the worker's heartbeat key and
// renews the lease of the job being measured, so a slow job is not reclaimed from a live
// worker. Models are kept in a private cache folder and hashed again on every use
// (worker_model_cache.h).
#pragma once

#include <atomic>
#include <string>

#include "core/status.h"
#include "measure/job_requeue.h"

namespace qtune::measure {

struct RedisWorkerOptions {
  std::string url;  // redis://[:PASSWORD@]HOST[:PORT][/DB]
  std::string queue = "default";
  std::string name;               // empty: HOST-PID
  int threads = 1;                // measuring threads (announced in the heartbeat)
  double lease_s = 30;            // a job pending this long on a silent worker is reclaimed
  double heartbeat_s = 2;         // heartbeat period; the key expires after 3 periods
  std::string cache_dir;          // models by SHA-256; empty: DefaultWorkerCacheDir(name)
  std::string worker_executable;  // the qtune binary (for `qtune measure-worker`)
  std::string benchmark_command;  // when set: measure with this command ({model}) instead
  std::string latency_regex;      // for benchmark_command; empty: the default
  int max_jobs = 0;               // > 0: stop after answering this many jobs
  RequeuePolicy requeue;          // how long a job for another machine is put back
  const std::atomic<bool>* stop = nullptr;  // set (by a signal handler) to stop
};

// Serves until *stop is set or max_jobs are answered. Errors only for bad options or when
// Redis refuses the password; an unreachable Redis is retried forever.
Status RunRedisWorker(const RedisWorkerOptions& options);

}  // namespace qtune::measure
