// The generation search does not depend on K (src/autotune/search.h): `qtune autotune
// --benchmark redis --parallel K` on the bundled fmnist model, with a deterministic
// benchmark (a latency that is a function of the model file), proposes and measures the
// same candidates and ends with the same placement and the same model for K = 1, 2, 4
// and 8, also when a worker is killed mid-job (its job is reclaimed by another) and when
// measurements time out on the worker (retried by the tuner). A real redis-server and
// real `qtune worker` processes.
#include <gtest/gtest.h>

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
// The latency of kLatencyOfFileScript; each call takes 10 ms and appends "START END" (ns)
// to intervals.txt beside the script, so the test can count the calls that ran at once.
const char kTimed[] =
    "s=$(date +%s%N)\nsleep 0.01\nn=$(cksum < \"$1\" | cut -d' ' -f1)\n"
    "echo \"$s $(date +%s%N)\" >> \"$(dirname \"$0\")/intervals.txt\"\n"
    "echo \"\\\"median_ms\\\": $((100 + n % 997))\"\n";
// The same, but one call in 32 hangs past --timeout (the worker kills it: a timeout, which
// the tuner retries).
const char kHangs[] =
    "[ $(od -An -N2 -tu2 /dev/urandom) -lt 2048 ] && sleep 30\n"
    "n=$(cksum < \"$1\" | cut -d' ' -f1)\necho \"\\\"median_ms\\\": $((100 + n % 997))\"\n";

class WorkersScaleTest : public qtune::testing::RedisTest {
 protected:
  WorkersScaleTest() : RedisTest("qtune_workers_scale_") {}
  void TearDown() override {
    workers_.clear();
    redis_.reset();
    RedisTest::TearDown();
  }
  void StartRedis() {
    auto server = RedisServer::Start(dir_.string());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    redis_ = std::move(*server);
  }
  // Workers <queue>1..<queue>N on `queue`, measuring with `script` (in its own folder).
  void StartWorkers(int n, const std::string& queue, const std::string& script,
                    const std::string& extra = "") {
    fs::create_directories(dir_ / queue);
    const fs::path path = dir_ / queue / "bench.sh";
    std::ofstream(path) << script;
    for (int i = 1; i <= n; ++i) {
      const std::string name = queue + std::to_string(i);
      auto w = WorkerProcess::Start(
          "--redis '" + redis_->Url() + "' --queue " + queue + " --name " + name +
              " --heartbeat 0.2 --lease 1" + " --benchmark-command 'sh " + path.string() +
              " {model}' --cache-dir " + (dir_ / name).string() + " " + extra,
          (dir_ / (name + ".log")).string());
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      workers_.push_back(std::move(*w));
    }
  }
  std::string Args(const std::string& name, const std::string& queue, int k) const {
    return "autotune " + kModel + " -o " + (dir_ / (name + ".onnx")).string() + " --calib " +
           kCalib + " --calib-samples 16 --mode quick --work-dir " + (dir_ / name).string() +
           " --benchmark redis --redis " + redis_->Url() + " --queue " + queue +
           " --retries 20 --parallel " + std::to_string(k);
  }
  nlohmann::json Report(const std::string& name) const {
    auto text = ReadFile((dir_ / name / "report.json").string());
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? nlohmann::json::parse(*text) : nlohmann::json{};
  }
  std::string Sha(const std::string& name) const {
    auto sha = Sha256File((dir_ / (name + ".onnx")).string());
    return sha.ok() ? *sha : "missing " + name;
  }
  // The most calls of the queue's script that ran at the same time.
  int MostAtOnce(const std::string& queue) const {
    std::ifstream in(dir_ / queue / "intervals.txt");
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

  std::unique_ptr<RedisServer> redis_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
};

// What must not depend on K: every pattern's schemes (order, status, ratio, adoption), the
// wins measured together, the final placement and model, the measurement count.
void ExpectSameSearch(const nlohmann::json& a, const nlohmann::json& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a["patterns"], b["patterns"]);
  EXPECT_EQ(a["combined"], b["combined"]);
  EXPECT_EQ(a["final"]["quantized_points"], b["final"]["quantized_points"]);
  EXPECT_EQ(a["time"]["generations"], b["time"]["generations"]);
  EXPECT_EQ(a["counts"]["measured"].get<int>() + a["counts"]["replayed"].get<int>(),
            b["counts"]["measured"].get<int>() + b["counts"]["replayed"].get<int>());
  EXPECT_EQ(b["counts"]["failed"].get<int>(), 0);
  EXPECT_EQ(b["counts"]["speculative_discarded"].get<int>(), 0);
}

TEST_F(WorkersScaleTest, SamePlacementForEveryKAndUnderAKilledWorkerAndTimeouts) {
  StartRedis();
  StartWorkers(8, "k", kTimed);
  auto one = RunQtuneCli(Args("k1", "k", 1));
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const nlohmann::json base = Report("k1");
  EXPECT_GT(base["counts"]["measured"].get<int>(), 10);
  EXPECT_GE(base["time"]["generations"].get<int>(), 2);
  EXPECT_EQ(MostAtOnce("k"), 1);
  for (int k : {2, 4, 8}) {
    const std::string name = "k" + std::to_string(k);
    fs::remove(dir_ / "k" / "intervals.txt");
    auto run = RunQtuneCli(Args(name, "k", k));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    ExpectSameSearch(base, Report(name), name);
    EXPECT_EQ(Sha("k1"), Sha(name));
    // Several in flight, never more than K.
    EXPECT_LE(MostAtOnce("k"), k) << name;
    EXPECT_GE(MostAtOnce("k"), 2) << name;
  }

  // A worker killed while the run goes on: its job is reclaimed after the lease.
  {
    const std::string args = Args("killed", "k", 4);
    auto tuner = Subprocess::Start(ShellArgv("exec " + std::string(QTUNE_BINARY) + " " + args +
                                             " >" + (dir_ / "killed.log").string() + " 2>&1"),
                                   SpawnOptions{});
    ASSERT_TRUE(tuner.ok()) << tuner.status().ToString();
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (workers_[0]->Log().find(": candidate ") == std::string::npos &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    workers_[0]->Kill();
    ASSERT_TRUE((*tuner)->WaitForExit(Clock::now() + std::chrono::seconds(120)));
    const ExitStatus status = (*tuner)->Reap();
    auto log = ReadFile((dir_ / "killed.log").string());
    ASSERT_EQ(status.exit_code, 0) << (log.ok() ? *log : "");
  }
  ExpectSameSearch(base, Report("killed"), "a worker killed");
  EXPECT_EQ(Sha("k1"), Sha("killed"));

  // Measurements that time out on the workers, retried by the tuner.
  StartWorkers(4, "h", kHangs);
  auto hangs = RunQtuneCli(Args("hangs", "h", 4) + " --timeout 2");
  ASSERT_EQ(hangs.exit_code, 0) << hangs.out;
  const nlohmann::json h = Report("hangs");
  EXPECT_GT(h["counts"]["retried"].get<int>(), 0);
  ExpectSameSearch(base, h, "timeouts");
  EXPECT_EQ(Sha("k1"), Sha("hangs"));
}

// Measurers the generation leaves idle measure the next one ahead, on a guess
// (search_speculation.cc): at K = 8 some of those measurements are the next generation's
// (used, not measured again), at K = 1 none is made, and the search is the same.
TEST_F(WorkersScaleTest, IdleWorkersMeasureTheNextGenerationAhead) {
  StartRedis();
  // About half a second per measurement: clear rounds, so the idle measurers are there.
  // As on a TensorRT device (bench/scale_out.sh), every QuantizeLinear takes 20 "ms" off,
  // plus a term of the file so that schemes differ: from fp32 (--start fp32) wins add up,
  // and the guess (all the wins together) is right.
  StartWorkers(8, "s",
               "sleep 0.08\nn=$(cksum < \"$1\" | cut -d' ' -f1)\n"
               "q=$(grep -aoP \"\\x22\\x0eQuantizeLinear\" \"$1\" | wc -l)\n"
               "echo \"\\\"median_ms\\\": $((2000 - 20 * q + n % 97))\"\n");
  // With --min-sqnr (every candidate passes) candidates proposed ahead are scored too, and
  // each report entry keeps the same SQNR.
  auto one = RunQtuneCli(Args("s1", "s", 1) + " --start fp32 --min-sqnr 1");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  auto eight = RunQtuneCli(Args("s8", "s", 8) + " --start fp32 --min-sqnr 1");
  ASSERT_EQ(eight.exit_code, 0) << eight.out;
  const nlohmann::json a = Report("s1"), b = Report("s8");
  ExpectSameSearch(a, b, "measured ahead");
  EXPECT_EQ(Sha("s1"), Sha("s8"));
  EXPECT_EQ(a["counts"]["speculated"].get<int>(), 0);
  const int ahead = b["counts"]["speculated"].get<int>();
  const int unused = b["counts"]["speculated_unused"].get<int>();
  EXPECT_GT(ahead - unused, 0) << b["counts"].dump();
  // Used ones count as measured once, in the same total as K = 1's.
  EXPECT_EQ(b["counts"]["replayed"].get<int>(), 0);
}

}  // namespace
}  // namespace qtune::measure
