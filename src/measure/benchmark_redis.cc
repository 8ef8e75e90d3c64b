#include "measure/benchmark_redis.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <random>
#include <thread>

#include "core/logging.h"

namespace qtune::measure {
namespace {

using Clock = std::chrono::steady_clock;

Measurement Failure(FailureKind kind, std::string detail) {
  Measurement m;
  m.failure = kind;
  m.detail = std::move(detail);
  return m;
}

std::vector<std::string> XaddArgs(const std::string& key, const StreamFields& fields) {
  std::vector<std::string> argv = {"XADD", key, "MAXLEN", "~", "100000", "*"};
  for (const auto& [f, v] : fields) {
    argv.push_back(f);
    argv.push_back(v);
  }
  return argv;
}

std::string MakeTunerId() {
  char host[128] = {};
  gethostname(host, sizeof(host) - 1);
  std::string clean;
  for (char c : std::string(host)) {
    clean += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  }
  std::random_device rd;
  return fmt::format("{}-{}-{:06x}", clean.substr(0, 60), getpid(), rd() & 0xffffff);
}

}  // namespace

RedisBenchmark::RedisBenchmark(RedisBenchmarkOptions options, RedisKeys keys, RedisUrl url)
    : options_(std::move(options)),
      keys_(std::move(keys)),
      client_(std::move(url)),
      uploader_(client_, keys_),
      tuner_id_(MakeTunerId()) {}

RedisBenchmark::~RedisBenchmark() {
  if (client_.connected())
    client_.Command({"DEL", keys_.results(tuner_id_)}).status().IgnoreError();
}

StatusOr<std::unique_ptr<RedisBenchmark>> RedisBenchmark::Create(RedisBenchmarkOptions options) {
  ASSIGN_OR_RETURN(RedisUrl url, ParseRedisUrl(options.url));
  ASSIGN_OR_RETURN(RedisKeys keys, RedisKeys::ForQueue(options.queue));
  std::unique_ptr<RedisBenchmark> bench(new RedisBenchmark(options, keys, url));
  RETURN_IF_ERROR(bench->client_.Connect());
  StatusOr<RedisReply> pong = bench->client_.Command({"PING"});
  if (!pong.ok()) return pong.status();
  // Wait for a worker's heartbeat: a clear error in seconds, not a hang on the first job.
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options.worker_wait_s * 1000));
  for (;;) {
    ASSIGN_OR_RETURN(auto workers, bench->LiveWorkers());
    if (options.threads > 0) {
      std::erase_if(workers,
                    [&](const auto& w) { return w.second.machine.threads != options.threads; });
    }
    if (!workers.empty()) {
      RETURN_IF_ERROR(bench->ChooseMachine(workers));
      break;
    }
    if (Clock::now() >= deadline && options.threads > 0) {
      return FailedPreconditionError(fmt::format(
          "no qtune worker measuring with {} threads serves queue '{}' on {} (none announced "
          "itself within {:g} s); start one on the measuring machine: qtune worker --redis {} "
          "--queue {} --threads {}",
          options.threads, options.queue, url.Redacted(), options.worker_wait_s, url.Redacted(),
          options.queue, options.threads));
    }
    if (Clock::now() >= deadline) {
      return FailedPreconditionError(fmt::format(
          "no qtune worker serves queue '{}' on {} (none announced itself within {:g} s); "
          "start one on the measuring machine: qtune worker --redis {} --queue {}",
          options.queue, url.Redacted(), options.worker_wait_s, url.Redacted(), options.queue));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return bench;
}

StatusOr<std::map<std::string, WorkerHeartbeat>> RedisBenchmark::LiveWorkers() {
  std::map<std::string, WorkerHeartbeat> workers;
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
      if (value.is_nil()) continue;  // expired between SCAN and GET
      StatusOr<WorkerHeartbeat> h = ParseHeartbeat(value.str);
      if (!h.ok()) {
        QTUNE_LOG_WARNING("redis: ignoring heartbeat key {}: {}", key.str, h.status().message());
        continue;
      }
      workers[h->name] = *h;
    }
  } while (cursor != "0");
  workers_live_ = static_cast<int>(workers.size());
  workers_build_plans_ =
      !workers.empty() && std::all_of(workers.begin(), workers.end(),
                                      [](const auto& w) { return w.second.builds_plans; });
  workers_seen_ = std::max(workers_seen_, workers_live_);
  return workers;
}

Status RedisBenchmark::ChooseMachine(const std::map<std::string, WorkerHeartbeat>& workers) {
  const WorkerHeartbeat& first = workers.begin()->second;
  const std::string machine = first.machine.Fingerprint();
  QTUNE_LOG_INFO("redis: {} worker(s) on queue '{}' at {}; measuring on machines like '{}' ({})",
                 workers.size(), options_.queue, client_.url().Redacted(), first.name, machine);
  for (const auto& [name, h] : workers) {
    if (h.machine.Fingerprint() == machine || refused_workers_.count(name)) continue;
    refused_workers_.insert(name);
    if (options_.allow_mixed_workers) {
      QTUNE_LOG_WARNING(
          "redis: worker '{}' runs on another machine ({}); using it anyway "
          "(--allow-mixed-workers): latencies may not be comparable",
          name, h.machine.Fingerprint());
    } else {
      QTUNE_LOG_WARNING(
          "redis: refusing worker '{}': its machine ({}) differs from '{}''s; "
          "latencies from different machines are not comparable "
          "(--allow-mixed-workers uses it anyway)",
          name, h.machine.Fingerprint(), first.name);
    }
  }
  if (!options_.allow_mixed_workers) required_machine_ = machine;
  return Status::Ok();
}

StatusOr<std::string> RedisBenchmark::Submit(const Job& job) {
  StatusOr<RedisReply> group =
      client_.Command({"XGROUP", "CREATE", keys_.jobs(), kRedisGroup, "0", "MKSTREAM"});
  if (!group.ok() && group.status().message().find("BUSYGROUP") == std::string::npos) {
    return group.status();
  }
  ASSIGN_OR_RETURN(RedisReply id, client_.Command(XaddArgs(keys_.jobs(), EncodeJob(job))));
  return id.str;
}

Job RedisBenchmark::MakeJob(const MeasureRequest& request) {
  Job job;
  job.id = fmt::format("{}-{}", tuner_id_, next_job_++);
  job.reply = keys_.results(tuner_id_);
  job.rounds = request.rounds;
  job.iters = options_.iters;
  job.warmup = options_.warmup;
  job.timeout_s = request.timeout_s > 0 ? request.timeout_s : options_.timeout_s;
  job.seed = options_.seed;
  job.shapes = options_.input_sizes;
  job.machine = required_machine_;
  job.candidate_bf16 = request.candidate_bf16;
  return job;
}

Measurement RedisBenchmark::Measure(const MeasureRequest& request) {
  Measurement out;
  std::deque<MeasureRequest> one{request};
  MeasureAll(one, [&out](size_t, Measurement m) { out = std::move(m); });
  return out;
}

void RedisBenchmark::MeasureAll(std::deque<MeasureRequest>& requests, const OnMeasured& on_done) {
  std::map<std::string, InFlight> jobs;  // by job id: submitted (or being submitted)
  std::deque<size_t> waiting;            // requests not handed out yet, in order
  size_t seen = 0;                       // requests[0, seen) are answered, in jobs or waiting
  double longest_timeout_s = 0;
  // Takes in the requests not seen yet (those on_done appended, too) behind the others.
  auto take_new = [&] {
    while (seen < requests.size()) {
      const size_t i = seen++;
      if ((requests[i].candidate_path.empty() && !requests[i].prepare) || requests[i].rounds < 1) {
        on_done(i, Failure(FailureKind::kUnparsable,
                           "a measurement needs a candidate path and rounds >= 1"));
        continue;
      }
      waiting.push_back(i);
      longest_timeout_s =
          std::max(longest_timeout_s,
                   requests[i].timeout_s > 0 ? requests[i].timeout_s : options_.timeout_s);
      ++batch_size_;
    }
  };
  batch_size_ = 0;
  take_new();
  // The queue must keep moving: every job has timeout + queue_wait after the batch's start
  // or its last answer, whichever is later.
  auto patience = [&] {
    return std::chrono::milliseconds(
        static_cast<int64_t>((longest_timeout_s + options_.queue_wait_s) * 1000));
  };
  auto deadline = Clock::now() + patience();
  std::string last_error;
  auto last_worker_check = Clock::now();
  auto last_worker_seen = Clock::now();
  // Answers every job in flight and waiting with `m`, and what on_done appends meanwhile.
  auto answer_all = [&](const Measurement& m) {
    for (;;) {
      for (auto& [id, f] : jobs) {
        if (!f.entry_id.empty() && client_.connected()) {  // withdraw it: nobody waits for it
          client_.Command({"XDEL", keys_.jobs(), f.entry_id}).status().IgnoreError();
        }
        Measurement mine = m;
        if (mine.failure == FailureKind::kTimeout) {
          mine.detail = fmt::format(
              "no worker answered job {} within {:g} s (--timeout {:g} s plus {:g} s of "
              "queueing)",
              id, longest_timeout_s + options_.queue_wait_s, f.job.timeout_s,
              options_.queue_wait_s);
        }
        on_done(f.index, std::move(mine));
      }
      jobs.clear();
      while (!waiting.empty()) {
        const size_t i = waiting.front();
        waiting.pop_front();
        Measurement mine = m;
        if (mine.failure == FailureKind::kTimeout) mine.detail = "not submitted: the queue stopped";
        on_done(i, std::move(mine));
      }
      take_new();
      if (waiting.empty()) return;
    }
  };
  // At most max_in_flight() jobs at once: the others wait here, their files not written.
  const size_t window = static_cast<size_t>(max_in_flight());
  auto fill = [&] {
    while (jobs.size() < window && !waiting.empty()) {
      const size_t i = waiting.front();
      waiting.pop_front();
      Job job = MakeJob(requests[i]);
      std::string id = job.id;
      jobs.emplace(std::move(id), InFlight{std::move(job), i, "", -1});
    }
  };
  in_flight_ = static_cast<int>(std::min(window, waiting.size()));
  NotifyStatus();
  for (;;) {
    take_new();  // what on_done appended (answers, refused files)
    if ((jobs.empty() && waiting.empty()) || Clock::now() >= deadline) break;
    fill();
    Status s = SubmitAll(requests, jobs, on_done);
    if (!s.ok()) {
      if (s.code() == StatusCode::kFailedPrecondition) {  // Redis refused a command
        answer_all(Failure(FailureKind::kConnection, s.message()));
        break;
      }
      if (last_error != s.message()) QTUNE_LOG_WARNING("redis: {}; retrying", s.message());
      last_error = s.message();
      continue;  // Connect() waits out the backoff
    }
    if (!last_error.empty()) QTUNE_LOG_INFO("redis: reconnected to {}", client_.url().Redacted());
    last_error.clear();
    if (jobs.empty()) continue;  // answered while submitting (unreadable files): fill again
    StatusOr<int> answered = CollectResults(jobs, on_done);
    if (!answered.ok()) {
      last_error = answered.status().message();
      QTUNE_LOG_WARNING("redis: {}; reconnecting", last_error);
      continue;
    }
    if (*answered > 0) {
      take_new();  // the deadline counts their timeouts too
      deadline = Clock::now() + patience();
      in_flight_ = static_cast<int>(jobs.size());
      NotifyStatus();
    }
    // Every few seconds: is any worker still alive?
    if (!jobs.empty() && Clock::now() - last_worker_check > std::chrono::seconds(2)) {
      last_worker_check = Clock::now();
      StatusOr<std::map<std::string, WorkerHeartbeat>> workers = LiveWorkers();
      if (workers.ok() && !workers->empty()) last_worker_seen = Clock::now();
      NotifyStatus();
      if (workers.ok() && workers->empty() &&
          Clock::now() - last_worker_seen >
              std::chrono::milliseconds(static_cast<int64_t>(options_.worker_wait_s * 1000))) {
        answer_all(Failure(FailureKind::kConnection,
                           fmt::format("no qtune worker is alive on queue '{}' at {} (its last "
                                       "heartbeat expired); start one: qtune worker --redis {} "
                                       "--queue {}",
                                       options_.queue, client_.url().Redacted(),
                                       client_.url().Redacted(), options_.queue)));
      }
    }
  }
  if (!jobs.empty() || !waiting.empty()) {
    answer_all(last_error.empty() ? Failure(FailureKind::kTimeout, "")
                                  : Failure(FailureKind::kConnection,
                                            "no answer from Redis in time: " + last_error));
  }
  in_flight_ = 0;
  NotifyStatus();
}

Status RedisBenchmark::SubmitAll(const std::deque<MeasureRequest>& requests,
                                 std::map<std::string, InFlight>& jobs, const OnMeasured& on_done) {
  RETURN_IF_ERROR(client_.Connect());
  for (auto it = jobs.begin(); it != jobs.end();) {
    InFlight& f = it->second;
    if (f.connect == client_.connects() && client_.connected()) {  // submitted already
      ++it;
      continue;
    }
    const MeasureRequest& request = requests[f.index];
    // A plan when every worker builds them (kilobytes), else the files, written now (once).
    const bool planned = request.candidate_plan.has_value() && workers_build_plans_;
    if (!planned && !f.paths.has_value()) {
      const MeasureRequest prepared = Prepared(request);
      f.paths.emplace(prepared.candidate_path, prepared.reference_path);
    }
    Status s = [&]() -> Status {
      const auto started = Clock::now();
      f.job.candidate_planned = planned;
      f.job.reference_planned = planned && request.reference_plan.has_value();
      f.job.reference_sha256.clear();
      if (planned) {
        ASSIGN_OR_RETURN(f.job.candidate_sha256, uploader_.Plan(*request.candidate_plan));
        if (f.job.reference_planned) {
          ASSIGN_OR_RETURN(f.job.reference_sha256, uploader_.Plan(*request.reference_plan));
        }
      } else {
        if (f.paths->first.empty()) return InvalidArgumentError("the candidate was not written");
        ASSIGN_OR_RETURN(f.job.candidate_sha256, uploader_.Model(f.paths->first));
        if (!f.paths->second.empty()) {
          ASSIGN_OR_RETURN(f.job.reference_sha256, uploader_.Model(f.paths->second));
        }
      }
      transfer_s_ += std::chrono::duration<double>(Clock::now() - started).count();
      if (!f.entry_id.empty()) {  // submitted before the connection was lost
        client_.Command({"XDEL", keys_.jobs(), f.entry_id}).status().IgnoreError();
      }
      ASSIGN_OR_RETURN(f.entry_id, Submit(f.job));
      f.connect = client_.connects();
      return Status::Ok();
    }();
    if (s.ok()) {
      ++it;
      continue;
    }
    if (s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kFailedPrecondition) {
      return s;
    }
    on_done(f.index, Failure(FailureKind::kUnparsable, s.message()));  // e.g. an unreadable file
    it = jobs.erase(it);
  }
  return Status::Ok();
}

StatusOr<int> RedisBenchmark::CollectResults(std::map<std::string, InFlight>& jobs,
                                             const OnMeasured& on_done) {
  const std::string reply = keys_.results(tuner_id_);
  ASSIGN_OR_RETURN(RedisReply r, client_.Command({"XREAD", "COUNT", "64", "BLOCK", "1000",
                                                  "STREAMS", reply, last_result_id_},
                                                 1.0));
  int answered = 0;
  if (!r.is_array()) return answered;
  for (const RedisReply& stream : r.elements) {
    if (!stream.is_array() || stream.elements.size() != 2) continue;
    StatusOr<std::vector<StreamEntry>> entries = ParseStreamEntries(stream.elements[1]);
    if (!entries.ok()) {
      QTUNE_LOG_WARNING("redis: ignoring a malformed reply on {}: {}", reply,
                        entries.status().message());
      continue;
    }
    for (const StreamEntry& e : *entries) {
      last_result_id_ = e.id;
      StatusOr<JobResult> result = ParseResult(e.fields);
      if (!result.ok()) {
        QTUNE_LOG_WARNING("redis: ignoring result {}: {}", e.id, result.status().message());
        continue;
      }
      auto it = jobs.find(result->job_id);
      if (it == jobs.end()) {
        QTUNE_LOG_DEBUG("redis: ignoring a late or repeated result for job {}", result->job_id);
        continue;
      }
      if (!required_machine_.empty() && result->machine != required_machine_) {
        // A worker of another machine never measures our jobs; it answers only to say that
        // none could take one (moved to the dead-letter stream, job_requeue.h): a failure,
        // not a latency, so its machine does not matter.
        if (result->measurement.failure != FailureKind::kConnection) {
          QTUNE_LOG_WARNING("redis: ignoring the result of worker '{}' (machine {})",
                            result->worker, result->machine);
          continue;
        }
        QTUNE_LOG_WARNING("redis: worker '{}' gave up on job {}: {}", result->worker,
                          result->job_id, result->measurement.detail);
      }
      NoteResult(*result);
      on_done(it->second.index, std::move(result->measurement));
      jobs.erase(it);
      ++answered;
    }
  }
  if (answered > 0) {
    client_.Command({"XTRIM", reply, "MINID", last_result_id_}).status().IgnoreError();
  }
  return answered;
}

void RedisBenchmark::NoteResult(const JobResult& result) {
  WorkerStats& s = worker_stats_[result.worker];
  if (s.jobs == 0) s.first = Clock::now();
  s.last = Clock::now();
  ++s.jobs;
  int total = 0;
  for (const auto& [name, stats] : worker_stats_) total += stats.jobs;
  if (total % 20 == 0) QTUNE_LOG_INFO("redis: {}", Describe());
}

std::string RedisBenchmark::ProgressNote() const {
  std::string note =
      fmt::format("workers {}, in flight {} of {}", workers_live_, in_flight_, batch_size_);
  const auto now = Clock::now();
  for (const auto& [name, s] : worker_stats_) {
    // Measurements per second since this worker's first answer (its first job's own time
    // is not in the span, hence jobs - 1).
    const double span = std::chrono::duration<double>(now - s.first).count();
    if (s.jobs > 1 && span > 0) {
      note += fmt::format(", {} {:.2f}/s", name, (s.jobs - 1) / span);
    } else {
      note += fmt::format(", {} {} job{}", name, s.jobs, s.jobs == 1 ? "" : "s");
    }
  }
  return note;
}

std::string RedisBenchmark::Describe() const {
  std::string workers;
  for (const auto& [name, s] : worker_stats_) {
    double span = std::chrono::duration<double>(s.last - s.first).count();
    workers += fmt::format("{}{} {} jobs", workers.empty() ? "" : ", ", name, s.jobs);
    if (span > 0 && s.jobs > 1) workers += fmt::format(" {:.2f}/s", (s.jobs - 1) / span);
  }
  return fmt::format(
      "redis {} queue {} ({} workers seen{}{}; uploaded {:.1f} MB for {} models and {} plans)",
      client_.url().Redacted(), options_.queue,
      std::max<size_t>(workers_seen_, worker_stats_.size()), workers.empty() ? "" : ": ", workers,
      uploader_.bytes() / 1e6, uploader_.models(), uploader_.plans());
}

std::string MeasuringMachine(const Benchmark& benchmark, int threads) {
  if (const auto* redis = dynamic_cast<const RedisBenchmark*>(&benchmark)) {
    return redis->required_machine().empty() ? "mixed workers" : redis->required_machine();
  }
  return ThisMachine(threads).Fingerprint();
}

}  // namespace qtune::measure
