// The wire format between a tuner (RedisBenchmark) and `qtune worker`s, all in one Redis
// database, every key under the prefix "qtune:<queue>:" (docs/workers.md):
//
//   <p>jobs                stream of jobs; consumer group "workers" (created by either
//                          side at id 0 when missing)
//   <p>model:<sha256>      the bytes of a model a job names (SET NX with a TTL): a model is
//                          uploaded once, not once per job; a model with big tensors is
//                          a skeleton naming them by SHA-256 (measure/model_blobs.h)
//   <p>plan:<sha256>       a planned-model document (measure/planned_model.h: a float
//                          model's SHA-256 and a quantization plan; SET with a TTL),
//                          which a worker builds into the model it measures
//   <p>blob:<sha256>       the raw bytes of one big tensor a skeleton names (SET with a
//                          TTL): uploaded once per tuner connection, shared by candidates
//   <p>results:<tuner>     stream of results for one tuner (its id, chosen at start)
//   <p>worker:<name>       a worker's heartbeat: JSON {name, host, pid, version, cpu_model,
//                          isa, threads, jobs, busy_s}, with a TTL of 3 heartbeats
//   <p>dead                jobs no worker could take (for a machine nobody serves), with
//                          dead_reason and dead_worker fields (measure/job_requeue.h)
//
// Job fields:    v=1, job (unique id), reply (the results stream; must be under <p>),
//                candidate, reference (sha256 hex; reference "" = none), rounds, iters,
//                warmup, timeout_s, seed, shapes (JSON {"input": [sizes]}), machine (the
//                fingerprint the measuring worker must have; "" = any); optional:
//                candidate_bf16 ("1": the candidate computes Conv/MatMul/Gemm in bf16,
//                MeasureRequest::candidate_bf16; absent or "0": not), candidate_kind and
//                reference_kind ("plan": the SHA-256 names <p>plan:<sha256>, built by the
//                worker; absent or "model": <p>model:<sha256>). A tuner sends plans only
//                when every live worker's heartbeat has "builds_plans": true.
// Result fields: v=1, job, worker, machine, kind ("none", "timeout", "crash", "exit",
//                "unparsable", "build", "connection"), exit_code, detail, candidate_ms
//                and reference_ms (JSON arrays, one median per round).
// Anything else (a missing or malformed field, a wrong size) is rejected by the parsers
// below with the reason.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/benchmark.h"
#include "measure/redis_client.h"

namespace qtune::measure {

inline constexpr const char* kRedisProtocolVersion = "1";
inline constexpr const char* kRedisGroup = "workers";
inline constexpr const char* kQtuneVersion = "0.1.0";

class RedisKeys {
 public:
  // InvalidArgument unless the queue name is 1..64 of [A-Za-z0-9_.-].
  static StatusOr<RedisKeys> ForQueue(const std::string& queue);
  std::string prefix() const { return prefix_; }
  std::string jobs() const { return prefix_ + "jobs"; }
  // Jobs no worker could take (job_requeue.h), with the reason: kept for the operator.
  std::string dead() const { return prefix_ + "dead"; }
  std::string model(const std::string& sha256) const { return prefix_ + "model:" + sha256; }
  std::string blob(const std::string& sha256) const { return prefix_ + "blob:" + sha256; }
  std::string plan(const std::string& sha256) const { return prefix_ + "plan:" + sha256; }
  std::string results(const std::string& tuner) const { return prefix_ + "results:" + tuner; }
  std::string worker(const std::string& name) const { return prefix_ + "worker:" + name; }
  std::string worker_pattern() const { return prefix_ + "worker:*"; }
  bool IsResultsKey(const std::string& key) const;

 private:
  std::string prefix_;
};

struct Job {
  std::string id;
  std::string reply;  // results stream key
  std::string candidate_sha256;
  std::string reference_sha256;  // empty: none
  int rounds = 3, iters = 10, warmup = 3;
  double timeout_s = 60;
  uint64_t seed = 0;
  std::map<std::string, std::vector<int64_t>> shapes;
  std::string machine;  // required worker fingerprint; empty: any
  bool candidate_bf16 = false;
  // The SHA-256s name planned-model documents (<p>plan:), not models.
  bool candidate_planned = false, reference_planned = false;
};
StreamFields EncodeJob(const Job& job);
// InvalidArgument naming the first bad field. The reply key is checked against `keys`.
StatusOr<Job> ParseJob(const StreamFields& fields, const RedisKeys& keys);

struct JobResult {
  std::string job_id;
  std::string worker;
  std::string machine;
  Measurement measurement;
};
StreamFields EncodeResult(const JobResult& result);
StatusOr<JobResult> ParseResult(const StreamFields& fields);

// What a worker announces: the machine its latencies come from.
struct MachineInfo {
  std::string cpu_model;  // /proc/cpuinfo "model name"
  std::string isa;        // the SIMD features that change kernels: "avx2 avx512f ..."
  int threads = 1;        // the worker's measuring threads
  std::string version = kQtuneVersion;
  // Latencies are comparable between workers with equal fingerprints.
  std::string Fingerprint() const;
};
MachineInfo ThisMachine(int threads);

struct WorkerHeartbeat {
  std::string name, host;
  int64_t pid = 0;
  MachineInfo machine;
  int64_t jobs = 0;           // jobs answered
  double busy_s = 0;          // time spent measuring
  bool builds_plans = false;  // takes jobs whose candidate_kind is "plan"
};
std::string EncodeHeartbeat(const WorkerHeartbeat& heartbeat);
StatusOr<WorkerHeartbeat> ParseHeartbeat(const std::string& json);

// FailureKind from its name ("exit" for kExit); false for an unknown name.
bool ParseFailureKind(const std::string& name, FailureKind* kind);

}  // namespace qtune::measure
