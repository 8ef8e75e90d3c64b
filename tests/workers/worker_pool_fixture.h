// A RedisTest (redis_test_fixture.h) with a server, `qtune worker`s and a tuner-side
// RedisBenchmark at hand, for the tests of hostile caches, jobs and URLs (issue 24).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/file_io.h"
#include "measure/benchmark_redis.h"
#include "workers/redis_server.h"
#include "workers/redis_test_fixture.h"

namespace qtune::testing {

class WorkerPoolTest : public RedisTest {
 protected:
  using Clock = std::chrono::steady_clock;

  explicit WorkerPoolTest(std::string prefix) : RedisTest(std::move(prefix)) {}
  void SetUp() override {
    RedisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::ofstream(dir_ / "fast.sh") << kLatencyOfFileScript;
  }
  void TearDown() override {
    workers_.clear();
    redis_.reset();
    RedisTest::TearDown();
  }
  void StartRedis(const std::string& bind = "127.0.0.1") {
    auto server = RedisServer::Start(dir_.string(), "", bind);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    redis_ = std::move(*server);
  }
  // `qtune worker` measuring with fast.sh; `cache` empty: --cache-dir <dir_>/cache-<name>,
  // "default": no --cache-dir.
  WorkerProcess& StartWorker(const std::string& name, const std::string& extra = "",
                             const std::string& cache = "") {
    std::string args = "--redis '" + redis_->Url() + "' --name " + name +
                       " --heartbeat 0.2 --lease 1 --benchmark-command 'sh " +
                       (dir_ / "fast.sh").string() + " {model}' " + extra;
    if (cache.empty()) args += " --cache-dir " + CacheOf(name);
    if (!cache.empty() && cache != "default") args += " --cache-dir '" + cache + "'";
    auto w = WorkerProcess::Start(args, (dir_ / (name + ".log")).string());
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    workers_.push_back(std::move(*w));
    return *workers_.back();
  }
  std::string CacheOf(const std::string& name) const { return (dir_ / ("cache-" + name)).string(); }
  std::unique_ptr<measure::RedisBenchmark> Bench(measure::RedisBenchmarkOptions o = {}) {
    if (o.url.empty()) o.url = redis_->Url();
    o.warmup = 0;
    o.iters = 1;
    if (o.input_sizes.empty()) o.input_sizes = {{"input", {1, 1, 28, 28}}};
    auto b = measure::RedisBenchmark::Create(o);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(*b) : nullptr;
  }
  // The test model with one extra byte: another file content.
  std::string ModelVariant(const std::string& name, char extra) {
    auto bytes = ReadFile(Model());
    EXPECT_TRUE(bytes.ok());
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << *bytes << extra;
    return path;
  }
  static std::string Model() {
    return std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
  }
  // What fast.sh says for `path` (the latency a worker reports for those bytes).
  double ScriptLatency(const std::string& path) {
    const std::string command = "sh '" + (dir_ / "fast.sh").string() + "' '" + path + "'";
    std::FILE* pipe = ::popen(command.c_str(), "r");
    char line[256] = {};
    const bool read = pipe != nullptr && std::fgets(line, sizeof(line), pipe) != nullptr;
    if (pipe != nullptr) ::pclose(pipe);
    EXPECT_TRUE(read) << command;
    const std::string text = line;
    return std::stod(text.substr(text.find(':') + 1));
  }
  // Waits (up to `seconds`) until `done()`; returns its last answer.
  template <typename F>
  static bool WaitFor(double seconds, F done) {
    const auto start = Clock::now();
    while (!done()) {
      if (std::chrono::duration<double>(Clock::now() - start).count() > seconds) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
  static double Seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  }

  std::unique_ptr<RedisServer> redis_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
};

}  // namespace qtune::testing
