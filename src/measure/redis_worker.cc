#include "measure/redis_worker.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "core/json_limits.h"
#include "core/logging.h"
#include "measure/benchmark_command.h"
#include "measure/benchmark_inprocess.h"
#include "measure/redis_client.h"
#include "measure/redis_protocol.h"
#include "measure/worker_model_cache.h"
#include "measure/worker_models.h"

namespace qtune::measure {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kResultTtlS = 86400;
constexpr size_t kCachedModels = 64;
constexpr size_t kCachedBlobs = 1024;  // tensors: candidates share most of theirs

std::string HostName() {
  char host[128] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

Measurement Failure(FailureKind kind, std::string detail) {
  Measurement m;
  m.failure = kind;
  m.detail = std::move(detail);
  return m;
}

// What the heartbeat thread shares with the serving loop.
struct SharedState {
  std::mutex mutex;
  std::string current_entry;  // the job being measured (its lease is renewed)
  int64_t jobs = 0;
  double busy_s = 0;
};

class Worker {
 public:
  Worker(const RedisWorkerOptions& options, RedisKeys keys, RedisUrl url, std::string name)
      : options_(options),
        keys_(std::move(keys)),
        url_(url),
        client_(url),
        name_(std::move(name)),
        machine_(ThisMachine(options.threads)) {}

  Status Run();

 private:
  bool Stopping() const { return options_.stop != nullptr && options_.stop->load(); }
  void HeartbeatLoop();
  Status EnsureGroup();
  // The next job: one left pending too long by any worker, else a new one; none after a
  // second without jobs.
  StatusOr<std::optional<StreamEntry>> NextJob();
  // Errors are connection problems: the job is left pending (reclaimed later).
  Status Handle(const StreamEntry& entry);
  StatusOr<Measurement> MeasureJob(const Job& job);
  // A job for another machine: back on the stream, or to the dead-letter stream
  // (job_requeue.h).
  Status PutBack(const StreamEntry& entry, const Job& job);
  // Whether a live worker's heartbeat announces `machine`.
  StatusOr<bool> MachineServed(const std::string& machine);
  StatusOr<Benchmark*> BenchmarkFor(const Job& job);
  Status Answer(const std::string& reply, const JobResult& result);
  Status Done(const std::string& entry_id);

  const RedisWorkerOptions& options_;
  RedisKeys keys_;
  RedisUrl url_;
  RedisClient client_;
  std::string name_;
  MachineInfo machine_;
  SharedState shared_;
  std::atomic<bool> stop_heartbeat_{false};
  std::optional<WorkerModelCache> cache_;  // opened by Run()
  std::optional<WorkerModels> models_;     // over cache_, made by Run()
  std::unique_ptr<Benchmark> benchmark_;
  std::string benchmark_key_;
};

void Worker::HeartbeatLoop() {
  RedisClient client(url_);
  const int ttl_s = std::max(5, static_cast<int>(3 * options_.heartbeat_s + 0.999));
  WorkerHeartbeat h{name_, HostName(), getpid(), machine_, 0, 0, /*builds_plans=*/true};
  while (!stop_heartbeat_.load()) {
    std::string entry;
    {
      std::lock_guard<std::mutex> lock(shared_.mutex);
      entry = shared_.current_entry;
      h.jobs = shared_.jobs;
      h.busy_s = shared_.busy_s;
    }
    StatusOr<RedisReply> r = client.Command(
        {"SET", keys_.worker(name_), EncodeHeartbeat(h), "EX", std::to_string(ttl_s)});
    if (r.ok() && !entry.empty()) {  // renew the lease: the job's idle time restarts
      client.Command({"XCLAIM", keys_.jobs(), kRedisGroup, name_, "0", entry, "JUSTID"})
          .status()
          .IgnoreError();
    }
    const auto until =
        Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options_.heartbeat_s * 1000));
    while (!stop_heartbeat_.load() && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  client.Command({"DEL", keys_.worker(name_)}).status().IgnoreError();
}

Status Worker::EnsureGroup() {
  StatusOr<RedisReply> r =
      client_.Command({"XGROUP", "CREATE", keys_.jobs(), kRedisGroup, "0", "MKSTREAM"});
  if (!r.ok() && r.status().message().find("BUSYGROUP") == std::string::npos) return r.status();
  return Status::Ok();
}

StatusOr<std::optional<StreamEntry>> Worker::NextJob() {
  const std::string lease_ms = std::to_string(static_cast<int64_t>(options_.lease_s * 1000));
  ASSIGN_OR_RETURN(RedisReply claimed, client_.Command({"XAUTOCLAIM", keys_.jobs(), kRedisGroup,
                                                        name_, lease_ms, "0-0", "COUNT", "1"}));
  if (claimed.is_array() && claimed.elements.size() >= 2) {
    ASSIGN_OR_RETURN(auto entries, ParseStreamEntries(claimed.elements[1]));
    for (StreamEntry& e : entries) {
      if (e.fields.empty()) continue;  // deleted meanwhile
      QTUNE_LOG_INFO("worker {}: reclaimed job entry {} (its worker went silent)", name_, e.id);
      return std::optional<StreamEntry>(std::move(e));
    }
  }
  ASSIGN_OR_RETURN(RedisReply r,
                   client_.Command({"XREADGROUP", "GROUP", kRedisGroup, name_, "COUNT", "1",
                                    "BLOCK", "1000", "STREAMS", keys_.jobs(), ">"},
                                   1.0));
  if (!r.is_array() || r.elements.empty()) return std::optional<StreamEntry>();
  const RedisReply& stream = r.elements[0];
  if (!stream.is_array() || stream.elements.size() != 2) {
    return InvalidArgumentError("XREADGROUP answered something that is not [stream, entries]");
  }
  ASSIGN_OR_RETURN(auto entries, ParseStreamEntries(stream.elements[1]));
  if (entries.empty()) return std::optional<StreamEntry>();
  return std::optional<StreamEntry>(std::move(entries[0]));
}

Status Worker::Done(const std::string& entry_id) {
  ASSIGN_OR_RETURN(RedisReply ack, client_.Command({"XACK", keys_.jobs(), kRedisGroup, entry_id}));
  ASSIGN_OR_RETURN(RedisReply del, client_.Command({"XDEL", keys_.jobs(), entry_id}));
  return Status::Ok();
}

Status Worker::Answer(const std::string& reply, const JobResult& result) {
  std::vector<std::string> argv = {"XADD", reply, "MAXLEN", "~", "10000", "*"};
  for (const auto& [f, v] : EncodeResult(result)) {
    argv.push_back(f);
    argv.push_back(v);
  }
  ASSIGN_OR_RETURN(RedisReply id, client_.Command(argv));
  ASSIGN_OR_RETURN(RedisReply ttl, client_.Command({"EXPIRE", reply, std::to_string(kResultTtlS)}));
  return Status::Ok();
}

Status Worker::Handle(const StreamEntry& entry) {
  StatusOr<Job> job = ParseJob(entry.fields, keys_);
  if (!job.ok()) {
    QTUNE_LOG_WARNING("worker {}: rejecting job entry {}: {}", name_, entry.id,
                      job.status().message());
    const std::string* reply = FindField(entry.fields, "reply");
    const std::string* id = FindField(entry.fields, "job");
    if (reply != nullptr && id != nullptr && keys_.IsResultsKey(*reply)) {
      JobResult r{*id, name_, machine_.Fingerprint(),
                  Failure(FailureKind::kUnparsable,
                          "the worker rejected the job: " + job.status().message())};
      RETURN_IF_ERROR(Answer(*reply, r));
    }
    return Done(entry.id);
  }
  if (!job->machine.empty() && job->machine != machine_.Fingerprint()) {
    return PutBack(entry, *job);
  }
  {
    std::lock_guard<std::mutex> lock(shared_.mutex);
    shared_.current_entry = entry.id;
  }
  const auto started = Clock::now();
  StatusOr<Measurement> m = MeasureJob(*job);
  const double busy = std::chrono::duration<double>(Clock::now() - started).count();
  {
    std::lock_guard<std::mutex> lock(shared_.mutex);
    shared_.current_entry.clear();
    shared_.busy_s += busy;
  }
  if (!m.ok()) return m.status();  // left pending: reclaimed after the lease
  if (m->ok()) {
    QTUNE_LOG_INFO("worker {}: job {}: candidate{} {:.3f} ms, reference {:.3f} ms ({:.1f} s)",
                   name_, job->id, job->candidate_bf16 ? " (bf16)" : "", Median(m->candidate_ms),
                   Median(m->reference_ms), busy);
  } else {
    QTUNE_LOG_WARNING("worker {}: job {}: {}: {}", name_, job->id,
                      FailureKindName(m->failure, m->exit_code), m->detail.substr(0, 300));
  }
  JobResult result{job->id, name_, machine_.Fingerprint(), *std::move(m)};
  RETURN_IF_ERROR(Answer(job->reply, result));
  RETURN_IF_ERROR(Done(entry.id));
  std::lock_guard<std::mutex> lock(shared_.mutex);
  ++shared_.jobs;
  return Status::Ok();
}

StatusOr<bool> Worker::MachineServed(const std::string& machine) {
  std::string cursor = "0";
  do {
    ASSIGN_OR_RETURN(RedisReply r, client_.Command({"SCAN", cursor, "MATCH", keys_.worker_pattern(),
                                                    "COUNT", "1000"}));
    if (!r.is_array() || r.elements.size() != 2 || !r.elements[1].is_array()) {
      return InternalError("Redis answered SCAN with something that is not [cursor, keys]");
    }
    cursor = r.elements[0].str;
    for (const RedisReply& key : r.elements[1].elements) {
      ASSIGN_OR_RETURN(RedisReply value, client_.Command({"GET", key.str}));
      if (!value.is_string()) continue;  // expired meanwhile
      StatusOr<WorkerHeartbeat> h = ParseHeartbeat(value.str);
      if (h.ok() && h->machine.Fingerprint() == machine) return true;
    }
  } while (cursor != "0");
  return false;
}

Status Worker::PutBack(const StreamEntry& entry, const Job& job) {
  ASSIGN_OR_RETURN(bool served, MachineServed(job.machine));
  ASSIGN_OR_RETURN(RedisReply time, client_.Command({"TIME"}));
  if (!time.is_array() || time.elements.size() != 2) {
    return InternalError("Redis answered TIME with something that is not [seconds, micros]");
  }
  const int64_t now_ms = std::atoll(time.elements[0].str.c_str()) * 1000 +
                         std::atoll(time.elements[1].str.c_str()) / 1000;
  const RequeueDecision d = DecideRequeue(ReadRequeueState(entry.fields), now_ms, served, job.id,
                                          job.machine, options_.requeue);
  if (d.dead_letter) {
    QTUNE_LOG_WARNING("worker {}: moving job {} to {}: {}", name_, job.id, keys_.dead(), d.reason);
    std::vector<std::string> argv = {"XADD", keys_.dead(), "MAXLEN", "~", "10000", "*"};
    for (const auto& [f, v] : entry.fields) {
      argv.push_back(f);
      argv.push_back(v);
    }
    for (const std::string& extra :
         {std::string("dead_worker"), name_, std::string("dead_reason"), d.reason}) {
      argv.push_back(extra);
    }
    ASSIGN_OR_RETURN(RedisReply id, client_.Command(argv));
    JobResult r{job.id, name_, machine_.Fingerprint(), Failure(FailureKind::kConnection, d.reason)};
    RETURN_IF_ERROR(Answer(job.reply, r));
    return Done(entry.id);
  }
  QTUNE_LOG_INFO(
      "worker {}: job {} is for another machine ({}); this one is {}; putting it back for the "
      "others ({} time{}{})",
      name_, job.id, job.machine, machine_.Fingerprint(), d.next.requeues,
      d.next.requeues == 1 ? "" : "s", served ? "" : "; no live worker announces that machine");
  std::vector<std::string> argv = {"XADD", keys_.jobs(), "*"};
  for (const auto& [f, v] : RequeuedFields(entry.fields, d.next)) {
    argv.push_back(f);
    argv.push_back(v);
  }
  ASSIGN_OR_RETURN(RedisReply id, client_.Command(argv));
  RETURN_IF_ERROR(Done(entry.id));
  // Let a worker of that machine take it; when none is alive there is nobody to wait for.
  std::this_thread::sleep_for(std::chrono::milliseconds(served ? 1000 : 100));
  return Status::Ok();
}

StatusOr<Benchmark*> Worker::BenchmarkFor(const Job& job) {
  if (!options_.benchmark_command.empty()) {
    if (!benchmark_) {
      CommandBenchmarkOptions b;
      b.command_template = options_.benchmark_command;
      b.latency_regex = options_.latency_regex;
      b.timeout_s = job.timeout_s;
      ASSIGN_OR_RETURN(auto bench, CommandBenchmark::Create(b));
      benchmark_ = std::move(bench);
    }
    return benchmark_.get();
  }
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, sizes] : job.shapes) shapes[name] = sizes;
  const std::string key =
      fmt::format("{} {} {} {}", job.warmup, job.iters, job.seed, DumpJson(shapes));
  if (!benchmark_ || key != benchmark_key_) {
    InProcessBenchmarkOptions b;
    b.worker_executable = options_.worker_executable;
    b.threads = options_.threads;
    b.warmup = job.warmup;
    b.iters = job.iters;
    b.input_sizes = job.shapes;
    b.timeout_s = job.timeout_s;
    b.seed = job.seed;
    benchmark_.reset();  // stops the old measuring child
    ASSIGN_OR_RETURN(auto bench, InProcessBenchmark::Create(b));
    benchmark_ = std::move(bench);
    benchmark_key_ = key;
  }
  return benchmark_.get();
}

StatusOr<Measurement> Worker::MeasureJob(const Job& job) {
  MeasureRequest request;
  request.rounds = job.rounds;
  request.timeout_s = job.timeout_s;
  request.candidate_bf16 = job.candidate_bf16;
  std::set<std::string> keep, blobs;
  for (const std::string* sha : {&job.candidate_sha256, &job.reference_sha256}) {
    if (sha->empty()) continue;
    const bool planned =
        sha == &job.candidate_sha256 ? job.candidate_planned : job.reference_planned;
    StatusOr<std::string> path =
        planned ? models_->Planned(*sha, blobs) : models_->Model(*sha, blobs);
    if (!path.ok()) {
      if (path.status().code() == StatusCode::kUnavailable) return path.status();
      QTUNE_LOG_WARNING("worker {}: rejecting job {}: {}", name_, job.id, path.status().message());
      return Failure(FailureKind::kUnparsable, path.status().message());
    }
    keep.insert(*path);
    (sha == &job.candidate_sha256 ? request.candidate_path : request.reference_path) = *path;
  }
  cache_->Prune(keep, kCachedModels);
  cache_->PruneBlobs(blobs, kCachedBlobs);
  StatusOr<Benchmark*> bench = BenchmarkFor(job);
  if (!bench.ok()) return Failure(FailureKind::kUnparsable, bench.status().message());
  return (*bench)->Measure(request);
}

Status Worker::Run() {
  ASSIGN_OR_RETURN(WorkerModelCache cache, WorkerModelCache::Open(options_.cache_dir, name_));
  cache_.emplace(std::move(cache));
  models_.emplace(client_, keys_, *cache_);
  // The first connection: a wrong password is an error; an unreachable server is waited for.
  for (std::string last;;) {
    Status s = client_.Connect();
    if (s.ok()) break;
    if (s.code() != StatusCode::kUnavailable) return s;
    if (s.message() != last) QTUNE_LOG_WARNING("worker {}: {}; retrying", name_, s.message());
    last = s.message();
    if (Stopping()) return Status::Ok();
  }
  QTUNE_LOG_INFO("worker {}: serving queue '{}' on {} ({})", name_, options_.queue, url_.Redacted(),
                 machine_.Fingerprint());
  std::thread heartbeat([this] { HeartbeatLoop(); });
  std::string outage;  // the last connection error, logged once per outage
  bool group_ok = false;
  while (!Stopping()) {
    Status s = group_ok ? Status::Ok() : EnsureGroup();
    StatusOr<std::optional<StreamEntry>> entry =
        s.ok() ? NextJob() : StatusOr<std::optional<StreamEntry>>(s);
    if (entry.ok()) group_ok = true;
    if (entry.ok() && entry->has_value()) s = Handle(**entry);
    if (!entry.ok()) s = entry.status();
    if (!s.ok()) {
      if (s.message().find("NOGROUP") != std::string::npos) group_ok = false;
      if (s.code() == StatusCode::kUnavailable) group_ok = false;  // maybe a new server
      if (outage != s.message()) QTUNE_LOG_WARNING("worker {}: {}; retrying", name_, s.message());
      outage = s.message();
      if (s.code() != StatusCode::kUnavailable)
        std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (!outage.empty()) QTUNE_LOG_INFO("worker {}: connected to {} again", name_, url_.Redacted());
    outage.clear();
    std::lock_guard<std::mutex> lock(shared_.mutex);
    if (options_.max_jobs > 0 && shared_.jobs >= options_.max_jobs) break;
  }
  stop_heartbeat_ = true;
  heartbeat.join();
  QTUNE_LOG_INFO("worker {}: stopped after {} jobs", name_, shared_.jobs);
  return Status::Ok();
}

}  // namespace

Status RunRedisWorker(const RedisWorkerOptions& options) {
  ASSIGN_OR_RETURN(RedisUrl url, ParseRedisUrl(options.url));
  ASSIGN_OR_RETURN(RedisKeys keys, RedisKeys::ForQueue(options.queue));
  if (options.threads < 1) return InvalidArgumentError("--threads must be at least 1");
  if (!(options.lease_s > 0) || !(options.heartbeat_s > 0)) {
    return InvalidArgumentError("--lease and --heartbeat must be positive");
  }
  std::string name = options.name;
  if (name.empty()) name = fmt::format("{}-{}", HostName(), getpid());
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  }
  RedisWorkerOptions resolved = options;
  if (resolved.cache_dir.empty()) {
    ASSIGN_OR_RETURN(resolved.cache_dir, DefaultWorkerCacheDir(name));
  }
  Worker worker(resolved, keys, url, name);
  return worker.Run();
}

}  // namespace qtune::measure
