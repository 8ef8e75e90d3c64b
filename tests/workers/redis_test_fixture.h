// The base fixture of the worker tests: without redis-server a test skips (and fails under
// CI=true); each test gets an empty folder dir_, removed after it passes. Subclasses reset
// their workers and server in TearDown before calling RedisTest::TearDown, and return from
// SetUp after RedisTest::SetUp when IsSkipped() or HasFatalFailure().
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "util/missing_dependency.h"
#include "workers/redis_server.h"

namespace qtune::testing {

// A benchmark command script (`sh SCRIPT {model}`) whose "median_ms" is a function of the
// model file's bytes: a deterministic back end, as tests/autotune uses.
inline constexpr char kLatencyOfFileScript[] =
    "n=$(cksum < \"$1\" | cut -d' ' -f1)\necho \"\\\"median_ms\\\": $((100 + n % 997))\"\n";

// Seconds since `since` on the steady clock.
inline double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

class RedisTest : public ::testing::Test {
 protected:
  // `prefix` names the folders of one test file apart from the others'.
  explicit RedisTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    if (!RedisServerAvailable()) {
      QTUNE_SKIP_OR_FAIL_IN_CI() << "redis-server is not installed (scripts/install_deps.sh)";
    }
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure() && !dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace qtune::testing
