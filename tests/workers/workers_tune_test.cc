// `qtune tune --benchmark redis` end to end: the real binary, a real redis-server started
// by the test and a real `qtune worker` measuring with qtune's engine. Every row (bf16
// included: the flag travels with the job) is measured on the worker; a thread count no
// worker measures with is a clear error within seconds. With --work-dir a rerun takes every
// row from the state log: no job reaches the worker, even when none is left running.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "core/file_io.h"
#include "util/missing_dependency.h"
#include "workers/redis_server.h"
#include "workers/redis_test_fixture.h"

namespace qtune::tune {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RedisServer;
using qtune::testing::RunQtuneCli;
using qtune::testing::WorkerProcess;
using Clock = std::chrono::steady_clock;

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";

class WorkersTuneTest : public qtune::testing::RedisTest {
 protected:
  WorkersTuneTest() : RedisTest("qtune_workers_tune_cmd_") {}
  void TearDown() override {
    worker_.reset();
    redis_.reset();
    RedisTest::TearDown();
  }
  // A redis-server with `password` and one engine worker measuring with 1 thread.
  void StartRedisAndWorker(const std::string& password) {
    auto server = RedisServer::Start(dir_.string(), password);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    redis_ = std::move(*server);
    auto w = WorkerProcess::Start("--redis '" + redis_->Url() + "' --queue tune --threads 1 " +
                                      "--name w1 --cache-dir " + (dir_ / "cache").string(),
                                  (dir_ / "w1.log").string());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    worker_ = std::move(*w);
  }
  std::string Args(const std::string& extra) const {
    return "tune " + kModel + " --calib " + kCalib + " -o " + (dir_ / "m.qtc").string() +
           " --calib-samples 64 --iters 3 --rounds 1 --benchmark redis --redis '" + redis_->Url() +
           "' --queue tune " + extra;
  }

  // The jobs the worker has measured so far (a line "...: candidate ..." each).
  int JobsOnWorker() const {
    const std::string log = worker_->Log();
    int jobs = 0;
    for (size_t at = log.find(": candidate"); at != std::string::npos;
         at = log.find(": candidate", at + 1)) {
      ++jobs;
    }
    return jobs;
  }

  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<WorkerProcess> worker_;
};

TEST_F(WorkersTuneTest, EveryRowIsMeasuredOnTheWorkerBf16Included) {
  const std::string password = "pw-" + std::to_string(getpid());
  StartRedisAndWorker(password);
  auto r = RunQtuneCli(Args("--candidates fp32,bf16,int8 --json"), /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out << worker_->Log();
  const nlohmann::json result = nlohmann::json::parse(r.out);
  int passed = 0;
  for (const auto& row : result["table"]) {
    if (row["status"] != "pass") continue;
    ++passed;
    EXPECT_GT(row["latency_ms"].get<double>(), 0) << row.dump();
    EXPECT_GT(row["fp32_latency_ms"].get<double>(), 0) << row.dump();
  }
  EXPECT_EQ(passed, 3) << r.out;
  // Three jobs on the worker, the bf16 one computed in bf16 there.
  const std::string log = worker_->Log();
  EXPECT_EQ(JobsOnWorker(), 3) << log;
  EXPECT_NE(log.find(": candidate (bf16) "), std::string::npos) << log;
  // The password is in neither the output nor the checkpoint.
  EXPECT_EQ(r.out.find(password), std::string::npos);
  auto checkpoint = ReadFile((dir_ / "m.qtc").string());
  ASSERT_TRUE(checkpoint.ok());
  EXPECT_EQ(checkpoint->find(password), std::string::npos);
}

TEST_F(WorkersTuneTest, ThreadCountNoWorkerMeasuresWithIsAClearErrorWithinSeconds) {
  StartRedisAndWorker("");
  const auto start = Clock::now();
  auto r = RunQtuneCli(Args("--candidates fp32 --threads 1,2 --worker-wait 2"));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("no qtune worker measuring with 2 threads serves queue 'tune'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--threads 2"), std::string::npos) << r.out;
  EXPECT_LT(seconds, 10);
}

TEST_F(WorkersTuneTest, RerunWithTheWorkDirTakesEveryRowFromTheStateLog) {
  StartRedisAndWorker("");
  const std::string args =
      Args("--candidates fp32,int8 --json --work-dir " + (dir_ / "work").string());
  auto first = RunQtuneCli(args, /*with_stderr=*/false);
  ASSERT_EQ(first.exit_code, 0) << first.out << worker_->Log();
  const int jobs = JobsOnWorker();
  EXPECT_EQ(jobs, 2) << worker_->Log();
  ASSERT_TRUE(fs::exists(dir_ / "work" / "state.jsonl"));

  auto second = RunQtuneCli(args, /*with_stderr=*/false);
  ASSERT_EQ(second.exit_code, 0) << second.out << worker_->Log();
  EXPECT_EQ(JobsOnWorker(), jobs) << "a replayed row was measured again: " << worker_->Log();
  const nlohmann::json a = nlohmann::json::parse(first.out);
  const nlohmann::json b = nlohmann::json::parse(second.out);
  ASSERT_EQ(a["table"].size(), b["table"].size());
  int replayed = 0;
  for (size_t i = 0; i < a["table"].size(); ++i) {
    const auto& before = a["table"][i];
    const auto& after = b["table"][i];
    if (before["status"] != "pass") continue;
    EXPECT_FALSE(before["replayed"].get<bool>()) << before.dump();
    EXPECT_TRUE(after["replayed"].get<bool>()) << after.dump();
    EXPECT_EQ(after["latency_ms"], before["latency_ms"]) << after.dump();
    EXPECT_EQ(after["fp32_latency_ms"], before["fp32_latency_ms"]) << after.dump();
    ++replayed;
  }
  EXPECT_EQ(replayed, 2) << second.out;
}

}  // namespace
}  // namespace qtune::tune
