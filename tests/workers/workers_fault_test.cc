// Faults the distributed measuring must survive, each against a real redis-server started
// by the test and real `qtune worker` processes: a worker killed mid-job, an engine crash,
// garbage on the streams, a password, a dropped connection and a restarted Redis.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "core/file_io.h"
#include "core/sha256.h"
#include "measure/benchmark_redis.h"
#include "measure/redis_client.h"
#include "measure/redis_protocol.h"
#include "util/missing_dependency.h"
#include "workers/redis_server.h"
#include "workers/redis_test_fixture.h"

namespace qtune::measure {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RedisServer;
using qtune::testing::SecondsSince;
using qtune::testing::WorkerProcess;
using Clock = std::chrono::steady_clock;

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::map<std::string, std::vector<int64_t>> kInputSizes = {{"input", {1, 1, 28, 28}}};

using qtune::testing::kLatencyOfFileScript;

class WorkersFaultTest : public qtune::testing::RedisTest {
 protected:
  WorkersFaultTest() : RedisTest("qtune_workers_") {}
  void SetUp() override {
    RedisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::ofstream(dir_ / "fast.sh") << kLatencyOfFileScript;
    std::ofstream(dir_ / "slow.sh") << "sleep 30\n" << kLatencyOfFileScript;
  }
  void TearDown() override {
    workers_.clear();
    redis_.reset();
    RedisTest::TearDown();
  }
  void StartRedis(const std::string& password = "") {
    auto server = RedisServer::Start(dir_.string(), password);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    redis_ = std::move(*server);
  }
  WorkerProcess& StartWorker(const std::string& name, const std::string& extra,
                             const std::string& url = "") {
    const std::string args = "--redis '" + (url.empty() ? redis_->Url() : url) + "' --name " +
                             name + " --heartbeat 0.2 --lease 1 --cache-dir " +
                             (dir_ / ("cache-" + name)).string() + " " + extra;
    auto w = WorkerProcess::Start(args, (dir_ / (name + ".log")).string());
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    workers_.push_back(std::move(*w));
    return *workers_.back();
  }
  std::string Command(const std::string& script) const {
    return "--benchmark-command 'sh " + (dir_ / script).string() + " {model}'";
  }
  std::unique_ptr<RedisBenchmark> Bench(RedisBenchmarkOptions o = {}) {
    if (o.url.empty()) o.url = redis_->Url();
    o.warmup = 0;
    o.iters = 1;
    o.input_sizes = kInputSizes;
    auto b = RedisBenchmark::Create(o);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(*b) : nullptr;
  }
  // A copy of the test model under `name` with one extra byte: another file content.
  std::string ModelVariant(const std::string& name, char extra) {
    auto bytes = ReadFile(kModel);
    EXPECT_TRUE(bytes.ok());
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << *bytes << extra;
    return path;
  }

  std::unique_ptr<RedisServer> redis_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
};

TEST_F(WorkersFaultTest, WorkerKilledMidJobHasItsJobReclaimedAndMeasuredOnce) {
  StartRedis();
  WorkerProcess& slow = StartWorker("slow", Command("slow.sh"));
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  const std::string model = ModelVariant("m.onnx", 'a');
  auto pending = std::async(std::launch::async, [&] {
    return bench->Measure({model, "", 1, /*timeout_s=*/60});
  });
  // Wait until the slow worker has taken the job, then kill it.
  const auto start = Clock::now();
  while (slow.Log().find("reclaimed") == std::string::npos &&
         qtune::testing::ChildrenOf(slow.pid()).empty() && SecondsSince(start) < 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(qtune::testing::ChildrenOf(slow.pid()).empty()) << slow.Log();
  slow.Kill();
  WorkerProcess& fast = StartWorker("fast", Command("fast.sh"));
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(30)), std::future_status::ready) << fast.Log();
  Measurement m = pending.get();
  ASSERT_TRUE(m.ok()) << FailureKindName(m.failure) << ": " << m.detail;
  ASSERT_EQ(m.candidate_ms.size(), 1u);
  EXPECT_GE(m.candidate_ms[0], 100);
  EXPECT_NE(fast.Log().find("reclaimed job entry"), std::string::npos) << fast.Log();
  EXPECT_NE(bench->Describe().find("fast 1 jobs"), std::string::npos) << bench->Describe();
  // The job leaves the stream (the worker deletes it just after answering): nothing is left
  // to measure twice.
  RedisClient admin(*ParseRedisUrl(redis_->Url()));
  int64_t jobs_left = -1;
  for (const auto start_wait = Clock::now(); SecondsSince(start_wait) < 5;) {
    auto length = admin.Command({"XLEN", "qtune:default:jobs"});
    ASSERT_TRUE(length.ok());
    jobs_left = length->integer;
    if (jobs_left == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(jobs_left, 0);
}

TEST_F(WorkersFaultTest, WorkersOnAnotherMachineAreRefusedUnlessAllowed) {
  StartRedis();
  // Another --threads is another machine fingerprint: latencies are not comparable.
  StartWorker("a", Command("fast.sh") + " --threads 1");
  WorkerProcess& b = StartWorker("b", Command("fast.sh") + " --threads 2");
  // Both heartbeats present before the tuner picks the first worker's machine.
  RedisClient admin(*ParseRedisUrl(redis_->Url()));
  for (const auto start = Clock::now(); SecondsSince(start) < 10;) {
    auto keys = admin.Command({"KEYS", "qtune:default:worker:*"});
    if (keys.ok() && keys->elements.size() == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  EXPECT_NE(bench->required_machine().find("threads 1"), std::string::npos);
  for (char c : std::string("xyz")) {
    Measurement m = bench->Measure({ModelVariant(std::string(1, c) + ".onnx", c), "", 1, 10});
    EXPECT_TRUE(m.ok()) << m.detail;
  }
  EXPECT_NE(bench->Describe().find("a 3 jobs"), std::string::npos) << bench->Describe();
  EXPECT_EQ(bench->Describe().find("b "), std::string::npos) << bench->Describe();
  // b never measured; the jobs it received went back on the stream.
  EXPECT_EQ(b.Log().find(": candidate"), std::string::npos) << b.Log();
  RedisBenchmarkOptions mixed;
  mixed.allow_mixed_workers = true;
  auto any = Bench(mixed);
  ASSERT_NE(any, nullptr);
  EXPECT_EQ(any->required_machine(), "");
}

TEST_F(WorkersFaultTest, EngineCrashIsAnsweredAsCrashAndTheWorkerKeepsServing) {
  StartRedis();
  WorkerProcess& worker = StartWorker("engine", "");
  // So many iterations that the measurement is still running when the engine is crashed.
  RedisBenchmarkOptions o;
  o.url = redis_->Url();
  o.iters = 2000000;
  o.warmup = 0;
  o.input_sizes = kInputSizes;
  auto bench = RedisBenchmark::Create(o);
  ASSERT_TRUE(bench.ok()) << bench.status().ToString();
  auto pending = std::async(std::launch::async, [&] {
    return (*bench)->Measure({kModel, "", 1, 60});
  });
  // The engine runs in the worker's child process: crash it mid-measurement. SIGABRT (what
  // a failed QTUNE_CHECK raises), not SIGSEGV: under ASan the child's SIGSEGV handler turns
  // a SIGSEGV into exit code 1, which is reported, rightly, as an exit, not a crash.
  std::vector<int> children;
  const auto start = Clock::now();
  while (children.empty() && SecondsSince(start) < 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    children = qtune::testing::ChildrenOf(worker.pid());
  }
  ASSERT_EQ(children.size(), 1u) << worker.Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(children[0], SIGABRT);
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  Measurement crashed = pending.get();
  EXPECT_EQ(crashed.failure, FailureKind::kCrash) << crashed.detail;
  // The same worker measures the next job.
  auto small = Bench();
  ASSERT_NE(small, nullptr);
  Measurement ok = small->Measure({kModel, kModel, 2, 60});
  EXPECT_TRUE(ok.ok()) << FailureKindName(ok.failure) << ": " << ok.detail;
  EXPECT_EQ(ok.candidate_ms.size(), 2u);
  EXPECT_EQ(ok.reference_ms.size(), 2u);
  EXPECT_EQ(::kill(worker.pid(), 0), 0) << "the worker died: " << worker.Log();
}

TEST_F(WorkersFaultTest, GarbageOnTheJobStreamIsRejectedWithALoggedReason) {
  StartRedis();
  WorkerProcess& worker = StartWorker("w", Command("fast.sh"));
  auto keys = *RedisKeys::ForQueue("default");
  RedisClient admin(*ParseRedisUrl(redis_->Url()));
  // Wait for the worker's group before adding entries.
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  ASSERT_TRUE(admin.Command({"XADD", keys.jobs(), "*", "hello", "world"}).ok());
  ASSERT_TRUE(admin
                  .Command({"XADD", keys.jobs(), "*", "v", "1", "job", "x", "reply",
                            "somewhere:else", "candidate", "abc"})
                  .ok());
  // A well-formed job whose model bytes are truncated.
  auto bytes = ReadFile(kModel);
  ASSERT_TRUE(bytes.ok());
  Job job;
  job.id = "truncated-1";
  job.reply = keys.results("tester");
  job.candidate_sha256 = Sha256Hex(*bytes);
  job.timeout_s = 10;
  ASSERT_TRUE(
      admin.Command({"SET", keys.model(job.candidate_sha256), bytes->substr(0, 1000)}).ok());
  std::vector<std::string> argv = {"XADD", keys.jobs(), "*"};
  for (const auto& [f, v] : EncodeJob(job)) {
    argv.push_back(f);
    argv.push_back(v);
  }
  ASSERT_TRUE(admin.Command(argv).ok());
  auto reply = admin.Command({"XREAD", "BLOCK", "10000", "STREAMS", job.reply, "0"}, 10);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_TRUE(reply->is_array()) << worker.Log();
  auto entries = ParseStreamEntries(reply->elements[0].elements[1]);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  auto result = ParseResult((*entries)[0].fields);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->job_id, "truncated-1");
  EXPECT_EQ(result->measurement.failure, FailureKind::kUnparsable);
  EXPECT_NE(result->measurement.detail.find("do not have that SHA-256"), std::string::npos);
  // The worker still serves well-formed jobs.
  Measurement m = bench->Measure({ModelVariant("m.onnx", 'b'), "", 1, 10});
  EXPECT_TRUE(m.ok()) << m.detail;
  const std::string log = worker.Log();
  EXPECT_NE(log.find("field 'v' is missing"), std::string::npos) << log;
  EXPECT_NE(log.find("field 'reply' is not a results stream"), std::string::npos) << log;
  EXPECT_EQ(::kill(worker.pid(), 0), 0);
}

TEST_F(WorkersFaultTest, PasswordUrlWorksAndThePasswordIsNeverLogged) {
  const std::string password = "s3cr3t-Pa55";
  StartRedis(password);
  WorkerProcess& worker = StartWorker("p", Command("fast.sh"));
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  Measurement m = bench->Measure({ModelVariant("m.onnx", 'c'), "", 1, 10});
  EXPECT_TRUE(m.ok()) << m.detail;
  EXPECT_EQ(bench->Describe().find(password), std::string::npos);
  EXPECT_EQ(worker.Log().find(password), std::string::npos) << worker.Log();
  // A wrong password: a clear error that does not repeat it.
  RedisBenchmarkOptions wrong;
  wrong.url = "redis://:not-" + password + "@127.0.0.1:" + std::to_string(redis_->port());
  auto refused = RedisBenchmark::Create(wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("refused the password"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find(password), std::string::npos);
}

TEST_F(WorkersFaultTest, DroppedConnectionsAndARestartedRedisAreSurvived) {
  StartRedis();
  StartWorker("r", Command("fast.sh"));
  RedisBenchmarkOptions o;
  o.queue_wait_s = 3;
  auto bench = Bench(o);
  ASSERT_NE(bench, nullptr);
  ASSERT_TRUE(bench->Measure({ModelVariant("a.onnx", 'd'), "", 1, 10}).ok());
  // Every client's connection dropped.
  RedisClient admin(*ParseRedisUrl(redis_->Url()));
  ASSERT_TRUE(admin.Command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).ok());
  Measurement after_drop = bench->Measure({ModelVariant("b.onnx", 'e'), "", 1, 10});
  EXPECT_TRUE(after_drop.ok()) << after_drop.detail;
  // Redis killed (its data lost) and restarted while a measurement waits.
  redis_->Stop();
  auto pending = std::async(std::launch::async, [&] {
    return bench->Measure({ModelVariant("c.onnx", 'f'), "", 1, 10});
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_TRUE(redis_->Restart().ok());
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(40)), std::future_status::ready);
  Measurement after_restart = pending.get();
  EXPECT_TRUE(after_restart.ok()) << after_restart.detail;
  // Redis gone for good: a connection failure, once the wait is over.
  redis_->Stop();
  const auto start = Clock::now();
  Measurement down = bench->Measure({ModelVariant("d.onnx", 'g'), "", 1, 1});
  EXPECT_EQ(down.failure, FailureKind::kConnection) << down.detail;
  EXPECT_LT(SecondsSince(start), 1 + o.queue_wait_s + 3);
}

// MeasureMany: the jobs of a batch are in flight together, each answered exactly once,
// also when Redis restarts (losing them) halfway.
TEST_F(WorkersFaultTest, ABatchIsMeasuredByBothWorkersAtOnceAndSurvivesARestartedRedis) {
  std::ofstream(dir_ / "seconds.sh") << "sleep 2\n" << kLatencyOfFileScript;
  StartRedis();
  StartWorker("b1", Command("seconds.sh"));
  StartWorker("b2", Command("seconds.sh"));
  RedisBenchmarkOptions o;
  o.queue_wait_s = 20;
  auto bench = Bench(o);
  ASSERT_NE(bench, nullptr);
  auto measure_batch = [&](const std::string& tag) {
    std::vector<MeasureRequest> requests;
    for (char c : std::string("pq")) {
      requests.push_back({ModelVariant(tag + c + ".onnx", c), "", 1, 30});
    }
    std::vector<int> answers(requests.size(), 0);
    std::vector<Measurement> results(requests.size());
    bench->MeasureMany(requests, [&](size_t i, Measurement m) {
      ++answers[i];
      results[i] = std::move(m);
    });
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(answers[i], 1) << tag << i;
      EXPECT_TRUE(results[i].ok()) << tag << i << ": " << results[i].detail;
    }
  };
  // Two jobs of two seconds each on two workers: together, well under the four seconds of
  // one after the other.
  const auto start = Clock::now();
  measure_batch("a");
  EXPECT_LT(SecondsSince(start), 3.5);
  EXPECT_NE(workers_[0]->Log().find(": candidate "), std::string::npos);
  EXPECT_NE(workers_[1]->Log().find(": candidate "), std::string::npos);
  // Redis killed while both jobs are on the workers, restarted two seconds later.
  auto restarted = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    redis_->Stop();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    return redis_->Restart();
  });
  measure_batch("b");
  EXPECT_TRUE(restarted.get().ok());
}

}  // namespace
}  // namespace qtune::measure
