// Streamed measuring (issue 25): a follow-up appended while a batch is measured goes to the
// workers the batch leaves idle, in the same call, against a real redis-server and real
// `qtune worker` processes timing a command that takes two seconds.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>

#include "autotune/measurer.h"
#include "core/file_io.h"
#include "measure/benchmark_redis.h"
#include "measure/state_log.h"
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

class WorkersStreamTest : public qtune::testing::RedisTest {
 protected:
  WorkersStreamTest() : RedisTest("qtune_stream_") {}
  void SetUp() override {
    RedisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::ofstream(dir_ / "seconds.sh") << "sleep 2\n" << qtune::testing::kLatencyOfFileScript;
    auto server = RedisServer::Start(dir_.string(), "");
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    redis_ = std::move(*server);
    for (const std::string name : {"s1", "s2"}) {
      auto w = WorkerProcess::Start(
          "--redis '" + redis_->Url() + "' --name " + name + " --heartbeat 0.2 --cache-dir " +
              (dir_ / ("cache-" + name)).string() + " --benchmark-command 'sh " +
              (dir_ / "seconds.sh").string() + " {model}'",
          (dir_ / (name + ".log")).string());
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      workers_.push_back(std::move(*w));
    }
    RedisBenchmarkOptions o;
    o.url = redis_->Url();
    o.warmup = 0;
    o.iters = 1;
    o.queue_wait_s = 30;
    o.input_sizes = {{"input", {1, 1, 28, 28}}};
    auto bench = RedisBenchmark::Create(o);
    ASSERT_TRUE(bench.ok()) << bench.status().ToString();
    bench_ = std::move(*bench);
  }
  void TearDown() override {
    workers_.clear();
    redis_.reset();
    RedisTest::TearDown();
  }
  // A copy of the test model with one extra byte: another file content, another job.
  std::string Variant(char extra) {
    auto bytes = ReadFile(kModel);
    EXPECT_TRUE(bytes.ok());
    const std::string path = (dir_ / (std::string("m") + extra + ".onnx")).string();
    std::ofstream(path, std::ios::binary) << *bytes << extra;
    return path;
  }

  std::unique_ptr<RedisServer> redis_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  std::unique_ptr<RedisBenchmark> bench_;
};

// Three jobs of two seconds on two workers leave one idle in the second round; the job
// appended when the first answer arrives takes it: two rounds (about 4 s), not three.
TEST_F(WorkersStreamTest, AFollowUpAppendedByOnDoneRunsBesideTheBatch) {
  std::deque<MeasureRequest> requests;
  for (char c : std::string("abc")) requests.push_back({Variant(c), "", 1, 30});
  const std::string follow_up = Variant('d');
  std::vector<int> answers;
  bool appended = false;
  const auto start = Clock::now();
  bench_->MeasureAll(requests, [&](size_t i, Measurement m) {
    if (answers.size() <= i) answers.resize(i + 1, 0);
    ++answers[i];
    EXPECT_TRUE(m.ok()) << i << ": " << m.detail;
    if (!appended) {
      appended = true;
      requests.push_back({follow_up, "", 1, 30});
    }
  });
  const double wall = SecondsSince(start);
  ASSERT_EQ(requests.size(), 4u);
  ASSERT_EQ(answers.size(), 4u);
  for (size_t i = 0; i < answers.size(); ++i) EXPECT_EQ(answers[i], 1) << i;
  EXPECT_LT(wall, 5.5) << "the follow-up waited for the batch: three rounds of 2 s";
}

// Measurer::CompareAll: a follow-up is measured and logged in the same stream, and one
// whose key was measured earlier in the stream is answered from what was logged.
TEST_F(WorkersStreamTest, CompareAllMeasuresFollowUpsAndReplaysARepeatedKey) {
  StateHeader header;
  header.qtune_version = "test";
  header.model_sha256 = std::string(64, 'b');
  std::vector<std::string> warnings;
  auto log = StateLog::Open((dir_ / "state.jsonl").string(), header, {}, &warnings);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  autotune::Measurer measurer(*bench_, **log, {.rounds = 1, .max_in_flight = 2});
  auto request = [&](char c, const std::string& key) {
    autotune::Measurer::Request r;
    r.key = {.candidate = key, .reference = "ref"};
    r.pattern = "p";
    r.scheme = std::string(1, c);
    r.write_files = [path = Variant(c)]() -> StatusOr<std::pair<std::string, std::string>> {
      return std::make_pair(path, std::string());
    };
    return r;
  };
  std::deque<autotune::Measurer::Request> requests = {request('a', "ka"), request('b', "kb")};
  std::map<size_t, autotune::Comparison> results;
  ASSERT_TRUE(measurer
                  .CompareAll(requests,
                              [&](size_t i, const autotune::Comparison& c) {
                                EXPECT_FALSE(results.count(i)) << "answered twice: " << i;
                                results[i] = c;
                                if (i == 0) {
                                  requests.push_back(request('c', "kc"));
                                  requests.push_back(request('a', "ka"));  // measured already
                                }
                              })
                  .ok());
  ASSERT_EQ(results.size(), 4u);
  for (const auto& [i, c] : results) EXPECT_TRUE(c.ok) << i << ": " << c.error;
  EXPECT_FALSE(results[2].replayed);
  EXPECT_TRUE(results[3].replayed);
  EXPECT_EQ(results[3].candidate_ms, results[0].candidate_ms);
  EXPECT_EQ(measurer.counters().measured, 3);
  EXPECT_EQ(measurer.counters().replayed, 1);
  log->reset();  // the file lock goes with it
  auto reopened = StateLog::Open((dir_ / "state.jsonl").string(), header, {}, &warnings);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->replayed().size(), 3u);
}

}  // namespace
}  // namespace qtune::measure
