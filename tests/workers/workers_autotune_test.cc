// `qtune autotune --benchmark redis` end to end: the real binary, a real redis-server
// started by the test, real `qtune worker` processes. With a deterministic benchmark (a
// latency that is a function of the model file) two workers give exactly the result of a
// single-process run, one job at a time or two (--parallel 2), also when the tuner is
// killed mid-run and restarted; an unreachable Redis or a queue without workers is a clear
// error within seconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_runner.h"
#include "core/file_io.h"
#include "core/sha256.h"
#include "measure/subprocess.h"
#include "util/missing_dependency.h"
#include "workers/redis_server.h"
#include "workers/redis_test_fixture.h"

namespace qtune::measure {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RedisServer;
using qtune::testing::RunQtuneCli;
using qtune::testing::WorkerProcess;
using Clock = std::chrono::steady_clock;

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";
using qtune::testing::kLatencyOfFileScript;
// The same latencies; each call also takes 50 ms and appends "START END" (ns) to
// intervals.txt beside the script, so a test can count the calls that ran at once.
const char kTimedLatencyOfFile[] =
    "s=$(date +%s%N)\nsleep 0.05\nn=$(cksum < \"$1\" | cut -d' ' -f1)\n"
    "echo \"$s $(date +%s%N)\" >> \"$(dirname \"$0\")/intervals.txt\"\n"
    "echo \"\\\"median_ms\\\": $((100 + n % 997))\"\n";

// Each QuantizeLinear node makes the model 3 ms slower: fp32 is the fastest.
const char kEachQuantizerHurts[] =
    "q=$(grep -aoP '\\x22\\x0eQuantizeLinear' \"$1\" | wc -l)\n"
    "echo \"\\\"median_ms\\\": $((2000 + 3 * q))\"\n";

class WorkersAutotuneTest : public qtune::testing::RedisTest {
 protected:
  WorkersAutotuneTest() : RedisTest("qtune_workers_tune_") {}
  void SetUp() override {
    RedisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::ofstream(dir_ / "bench.sh") << kLatencyOfFileScript;
    std::ofstream(dir_ / "timed.sh") << kTimedLatencyOfFile;
    std::ofstream(dir_ / "hurts.sh") << kEachQuantizerHurts;
  }
  void TearDown() override {
    workers_.clear();
    redis_.reset();
    RedisTest::TearDown();
  }
  std::string Args(const std::string& name, const std::string& extra) const {
    return "autotune " + kModel + " -o " + (dir_ / (name + ".onnx")).string() + " --calib " +
           kCalib + " --calib-samples 64 --mode quick --work-dir " + (dir_ / name).string() + " " +
           extra;
  }
  std::string BenchCommand(const std::string& script = "bench.sh") const {
    return "'sh " + (dir_ / script).string() + " {model}'";
  }
  // Starts workers w1..wN on queue `queue`, measuring with `script`.
  void StartWorkers(int n, const std::string& queue, const std::string& script) {
    for (int i = 1; i <= n; ++i) {
      const std::string name = "w" + std::to_string(i);
      auto w =
          WorkerProcess::Start("--redis '" + redis_->Url() + "' --queue " + queue + " --name " +
                                   name + " --benchmark-command " + BenchCommand(script) +
                                   " --cache-dir " + (dir_ / name).string(),
                               (dir_ / (name + ".log")).string());
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      workers_.push_back(std::move(*w));
    }
  }
  // The most benchmark calls of timed.sh that ran at the same time.
  int MostAtOnce() const {
    std::ifstream in(dir_ / "intervals.txt");
    std::vector<std::pair<int64_t, int>> events;  // (time, +1 start / -1 end)
    for (int64_t start = 0, end = 0; in >> start >> end;) {
      events.emplace_back(start, 1);
      events.emplace_back(end, -1);
    }
    std::sort(events.begin(), events.end());  // an end before a start at the same time
    int now = 0, most = 0;
    for (const auto& [t, delta] : events) most = std::max(most, now += delta);
    return most;
  }
  nlohmann::json Report(const std::string& name) const {
    auto text = ReadFile((dir_ / name / "report.json").string());
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? nlohmann::json::parse(*text) : nlohmann::json{};
  }
  std::string Sha(const std::string& file) const {
    auto sha = Sha256File((dir_ / file).string());
    return sha.ok() ? *sha : "missing " + file;
  }

  std::unique_ptr<RedisServer> redis_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
};

std::vector<std::string> BestSchemes(const nlohmann::json& report) {
  std::vector<std::string> schemes;
  for (const auto& p : report["patterns"]) {
    schemes.push_back(p["id"].get<std::string>() + "=" + p["best_scheme"].get<std::string>());
  }
  return schemes;
}

TEST_F(WorkersAutotuneTest, TwoWorkersGiveTheSingleProcessResult) {
  const std::string password = "pw-" + std::to_string(getpid());
  auto server = RedisServer::Start(dir_.string(), password);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  redis_ = std::move(*server);
  for (const std::string name : {"w1", "w2"}) {
    auto w = WorkerProcess::Start("--redis '" + redis_->Url() + "' --queue e2e --name " + name +
                                      " --benchmark-command " + BenchCommand() + " --cache-dir " +
                                      (dir_ / name).string(),
                                  (dir_ / (name + ".log")).string());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    workers_.push_back(std::move(*w));
  }
  auto single =
      RunQtuneCli(Args("single", "--benchmark command --benchmark-command " + BenchCommand()));
  ASSERT_EQ(single.exit_code, 0) << single.out;
  auto remote =
      RunQtuneCli(Args("remote", "--benchmark redis --redis '" + redis_->Url() + "' --queue e2e"));
  ASSERT_EQ(remote.exit_code, 0) << remote.out;
  const nlohmann::json a = Report("single"), b = Report("remote");
  EXPECT_EQ(BestSchemes(a), BestSchemes(b));
  EXPECT_EQ(Sha("single.onnx"), Sha("remote.onnx"));
  EXPECT_EQ(a["counts"]["measured"], b["counts"]["measured"]);
  EXPECT_GT(b["counts"]["measured"].get<int>(), 0);
  EXPECT_EQ(b["counts"]["failed"].get<int>(), 0);
  // Both workers measured; the password shows nowhere.
  for (const auto& w : workers_) {
    EXPECT_NE(w->Log().find(": candidate "), std::string::npos) << w->Log();
    EXPECT_EQ(w->Log().find(password), std::string::npos);
  }
  EXPECT_EQ(remote.out.find(password), std::string::npos);
  for (const char* file : {"report.json", "state.jsonl"}) {
    auto text = ReadFile((dir_ / "remote" / file).string());
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(text->find(password), std::string::npos) << file;
  }
  // A warm restart replays everything: no worker is asked again.
  auto again =
      RunQtuneCli(Args("remote", "--benchmark redis --redis '" + redis_->Url() + "' --queue e2e"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(Report("remote")["counts"]["measured"].get<int>(), 0);
}

TEST_F(WorkersAutotuneTest, ParallelTwoKeepsTwoWorkersBusyAndGivesTheSingleProcessResult) {
  auto server = RedisServer::Start(dir_.string());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  redis_ = std::move(*server);
  StartWorkers(2, "par", "timed.sh");
  auto single =
      RunQtuneCli(Args("single", "--benchmark command --benchmark-command " + BenchCommand()));
  ASSERT_EQ(single.exit_code, 0) << single.out;
  auto remote = RunQtuneCli(
      Args("remote", "--benchmark redis --redis " + redis_->Url() + " --queue par --parallel 2"));
  ASSERT_EQ(remote.exit_code, 0) << remote.out;
  const nlohmann::json a = Report("single"), b = Report("remote");
  // Every scheme of every pattern: same order, statuses, ratios, adoptions; the same
  // measurements (the generation search proposes the same candidates whatever K is).
  EXPECT_EQ(a["patterns"], b["patterns"]);
  EXPECT_EQ(Sha("single.onnx"), Sha("remote.onnx"));
  EXPECT_EQ(b["counts"]["failed"].get<int>(), 0);
  EXPECT_EQ(b["counts"]["speculative_discarded"].get<int>(), 0);
  EXPECT_EQ(b["counts"]["measured"].get<int>(), a["counts"]["measured"].get<int>());
  // Two measurements did run at the same time, never more.
  EXPECT_EQ(MostAtOnce(), 2);
  for (const auto& w : workers_) EXPECT_NE(w->Log().find(": candidate "), std::string::npos);
  // A warm restart with another --parallel replays everything.
  auto again = RunQtuneCli(
      Args("remote", "--benchmark redis --redis " + redis_->Url() + " --queue par --parallel 3"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(Report("remote")["counts"]["measured"].get<int>(), 0);
  EXPECT_EQ(Sha("single.onnx"), Sha("remote.onnx"));
}

// With --parallel, --start auto measures the baseline with a first generation from the
// rule-based placement; where fp32 is faster, that generation is set aside and the search
// starts again from fp32: the result of one measurement at a time, which measures the
// baseline first.
TEST_F(WorkersAutotuneTest, ParallelStartAutoThatFindsFp32FasterGivesTheSingleProcessResult) {
  auto server = RedisServer::Start(dir_.string());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  redis_ = std::move(*server);
  StartWorkers(2, "auto", "hurts.sh");
  auto single = RunQtuneCli(
      Args("single", "--benchmark command --benchmark-command " + BenchCommand("hurts.sh")));
  ASSERT_EQ(single.exit_code, 0) << single.out;
  auto remote = RunQtuneCli(
      Args("remote", "--benchmark redis --redis " + redis_->Url() + " --queue auto --parallel 2"));
  ASSERT_EQ(remote.exit_code, 0) << remote.out;
  const nlohmann::json a = Report("single"), b = Report("remote");
  EXPECT_EQ(a["baseline"]["start"], "fp32");
  EXPECT_EQ(b["baseline"]["start"], "fp32");
  EXPECT_EQ(a["patterns"], b["patterns"]);
  EXPECT_EQ(Sha("single.onnx"), Sha("remote.onnx"));
  EXPECT_EQ(a["counts"]["speculative_discarded"].get<int>(), 0);
  const int discarded = b["counts"]["speculative_discarded"].get<int>();
  EXPECT_GT(discarded, 0);
  EXPECT_EQ(b["counts"]["measured"].get<int>(), a["counts"]["measured"].get<int>() + discarded);
  EXPECT_THAT(remote.out, ::testing::HasSubstr("the baseline chose another start"));
}

// Lines of `path` (0 when missing).
int LineCount(const fs::path& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

TEST_F(WorkersAutotuneTest, ParallelRunKilledMidSearchResumesToTheSingleProcessResult) {
  auto server = RedisServer::Start(dir_.string());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  redis_ = std::move(*server);
  StartWorkers(2, "kill", "timed.sh");  // 50 ms a call: time to kill it mid-search
  auto single =
      RunQtuneCli(Args("single", "--benchmark command --benchmark-command " + BenchCommand()));
  ASSERT_EQ(single.exit_code, 0) << single.out;
  const int single_lines = LineCount(dir_ / "single" / "state.jsonl");
  const std::string remote_args =
      Args("remote", "--benchmark redis --redis " + redis_->Url() + " --queue kill --parallel 2");
  {
    // SIGKILL once about half of the measurements are in the log.
    auto tuner =
        Subprocess::Start(ShellArgv("exec " + std::string(QTUNE_BINARY) + " " + remote_args + " >" +
                                    (dir_ / "killed.log").string() + " 2>&1"),
                          SpawnOptions{});
    ASSERT_TRUE(tuner.ok()) << tuner.status().ToString();
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (LineCount(dir_ / "remote" / "state.jsonl") < single_lines / 2 &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill((*tuner)->pid(), SIGKILL);
  }
  const int logged = LineCount(dir_ / "remote" / "state.jsonl");
  ASSERT_GE(logged, single_lines / 2);
  ASSERT_LT(logged, single_lines) << "the run ended before it was killed";
  auto resumed = RunQtuneCli(remote_args);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const nlohmann::json a = Report("single"), b = Report("remote");
  EXPECT_EQ(BestSchemes(a), BestSchemes(b));
  EXPECT_EQ(Sha("single.onnx"), Sha("remote.onnx"));
  EXPECT_GT(b["counts"]["replayed"].get<int>(), 0);
  EXPECT_EQ(b["counts"]["failed"].get<int>(), 0);
}

TEST_F(WorkersAutotuneTest, UnreachableRedisIsAClearErrorWithinSeconds) {
  const int port = qtune::testing::FreeLoopbackPort();  // nothing listens there
  const auto start = Clock::now();
  auto r = RunQtuneCli(
      Args("x", "--benchmark redis --redis redis://127.0.0.1:" + std::to_string(port) + "/0"));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("cannot reach Redis at redis://127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << r.out;
  EXPECT_LT(seconds, 10);
}

TEST_F(WorkersAutotuneTest, NoWorkerIsAClearErrorWithinSeconds) {
  auto server = RedisServer::Start(dir_.string());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  redis_ = std::move(*server);
  const auto start = Clock::now();
  auto r = RunQtuneCli(
      Args("x", "--benchmark redis --worker-wait 2 --queue lonely --redis " + redis_->Url()));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("no qtune worker serves queue 'lonely'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("qtune worker --redis"), std::string::npos) << r.out;
  EXPECT_LT(seconds, 10);
}

}  // namespace
}  // namespace qtune::measure
