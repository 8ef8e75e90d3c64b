// `qtune autotune --benchmark redis` end to end: the real binary, a real redis-server
// started by the test, real `qtune worker` processes. With a deterministic benchmark (a
// latency that is a function of the model file) two workers give exactly the result of a
// single-process run; an unreachable Redis or a queue without workers is a clear error
// within seconds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "core/file_io.h"
#include "core/sha256.h"
#include "util/missing_dependency.h"
#include "workers/redis_server.h"

namespace qtune::autotune {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RedisServer;
using qtune::testing::RunQtuneCli;
using qtune::testing::WorkerProcess;
using Clock = std::chrono::steady_clock;

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";
const char kLatencyOfFile[] =
    "n=$(cksum < \"$1\" | cut -d' ' -f1)\necho \"\\\"median_ms\\\": $((100 + n % 997))\"\n";

class WorkersAutotuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!qtune::testing::RedisServerAvailable()) {
      QTUNE_SKIP_OR_FAIL_IN_CI() << "redis-server is not installed (scripts/install_deps.sh)";
    }
    dir_ = fs::temp_directory_path() /
           ("qtune_workers_tune_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "bench.sh") << kLatencyOfFile;
  }
  void TearDown() override {
    workers_.clear();
    redis_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }
  std::string Args(const std::string& name, const std::string& extra) const {
    return "autotune " + kModel + " -o " + (dir_ / (name + ".onnx")).string() + " --calib " +
           kCalib + " --calib-samples 64 --mode quick --work-dir " + (dir_ / name).string() + " " +
           extra;
  }
  std::string BenchCommand() const { return "'sh " + (dir_ / "bench.sh").string() + " {model}'"; }
  nlohmann::json Report(const std::string& name) const {
    auto text = ReadFile((dir_ / name / "report.json").string());
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? nlohmann::json::parse(*text) : nlohmann::json{};
  }
  std::string Sha(const std::string& file) const {
    auto sha = Sha256File((dir_ / file).string());
    return sha.ok() ? *sha : "missing " + file;
  }

  fs::path dir_;
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
}  // namespace qtune::autotune
