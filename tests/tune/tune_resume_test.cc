// A tune resumes from its work dir's state log (tune_log.h) on fmnist with real measuring
// processes: a rerun measures nothing it measured before, a failed measurement is measured
// again, other measuring options are refused (or --force-new starts over), and a tune killed
// with SIGKILL after its first measurement takes that one from the log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_runner.h"
#include "ir/onnx_io.h"
#include "tune/checkpoint_test_util.h"
#include "tune/tune.h"
#include "tune/tune_test_util.h"

extern char** environ;

namespace qtune::tune {
namespace {

using testing::FastTuneOptions;
using ::testing::HasSubstr;
using testing::ScratchDir;

// Measurement records in the work dir's log (every line but the header).
int LoggedRecords(const std::string& work_dir) {
  std::ifstream in(work_dir + "/state.jsonl");
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines > 0 ? lines - 1 : 0;
}

class TuneResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = ir::LoadModel(testing::kFmnistModel);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(*model);
    options_ = FastTuneOptions({"fp32", "int8"});
    options_.work_dir = scratch_.Join("work");
  }

  ScratchDir scratch_;
  std::unique_ptr<ir::Graph> model_;
  TuneOptions options_;
};

TEST_F(TuneResumeTest, ARerunTakesEveryRowFromTheLog) {
  auto first = Tune(*model_, options_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->rows.size(), 2u);
  for (const TuneRow& row : first->rows) {
    EXPECT_EQ(row.status, TuneRow::Status::kPassed) << row.candidate << ": " << row.why;
    EXPECT_FALSE(row.replayed) << row.candidate;
  }
  EXPECT_EQ(LoggedRecords(options_.work_dir), 2);

  auto again = Tune(*model_, options_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->rows.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const TuneRow& row = again->rows[i];
    EXPECT_TRUE(row.replayed) << row.candidate << " was measured again";
    EXPECT_DOUBLE_EQ(row.latency_ms, first->rows[i].latency_ms) << row.candidate;
    EXPECT_DOUBLE_EQ(row.fp32_latency_ms, first->rows[i].fp32_latency_ms) << row.candidate;
  }
  EXPECT_EQ(again->chosen, first->chosen);
  EXPECT_EQ(LoggedRecords(options_.work_dir), 2) << "nothing new was measured";
}

TEST_F(TuneResumeTest, AFailedMeasurementIsMeasuredAgain) {
  TuneOptions failing = options_;
  failing.candidates = {"fp32"};
  failing.timeout_s = 1e-3;  // not in the header: it changes no latency
  auto first = Tune(*model_, failing);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->rows[0].status, TuneRow::Status::kFailed);
  EXPECT_THAT(first->rows[0].why, HasSubstr("timeout"));
  EXPECT_EQ(LoggedRecords(options_.work_dir), 1);  // the failure is logged

  failing.timeout_s = 120;
  auto again = Tune(*model_, failing);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->rows[0].status, TuneRow::Status::kPassed) << again->rows[0].why;
  EXPECT_FALSE(again->rows[0].replayed);
  EXPECT_GT(again->rows[0].latency_ms, 0);
  EXPECT_EQ(LoggedRecords(options_.work_dir), 2);
}

TEST_F(TuneResumeTest, OtherMeasuringOptionsAreRefusedUnlessForcedNew) {
  options_.candidates = {"fp32"};
  ASSERT_TRUE(Tune(*model_, options_).ok());
  TuneOptions other = options_;
  other.rounds = 2;
  auto refused = Tune(*model_, other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("rounds: log 1, this run 2"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--force-new"));

  other.force_new = true;
  auto fresh = Tune(*model_, other);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_FALSE(fresh->rows[0].replayed);
  EXPECT_TRUE(std::filesystem::exists(options_.work_dir + "/state.jsonl.old-1"));
}

// A candidate built from other calibration data is another file: measured, not replayed.
TEST_F(TuneResumeTest, ACandidateThatBuiltDifferentlyIsMeasuredAfresh) {
  ASSERT_TRUE(Tune(*model_, options_).ok());
  TuneOptions fewer = options_;
  fewer.max_calib_samples = 16;  // other int8 scales; the fp32 row is the same file
  auto again = Tune(*model_, fewer);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->rows[0].replayed) << "fp32";
  EXPECT_FALSE(again->rows[1].replayed) << "int8 with other scales";
  EXPECT_EQ(LoggedRecords(options_.work_dir), 3);
}

// `qtune tune --work-dir` killed with SIGKILL right after its first row was logged; the
// rerun takes that row from the log and measures only the rest.
TEST_F(TuneResumeTest, AKilledTuneResumesWithoutMeasuringAgain) {
  const std::string args = "tune " + testing::kFmnistModel + " --calib " + testing::kFmnistCalib +
                           " -o " + scratch_.Join("m.qtc") + " --work-dir " + options_.work_dir +
                           " --candidates fp32,int8 --calib-samples 64 --iters 3 --rounds 1";
  const std::string command = std::string(QTUNE_BINARY) + " " + args + " >/dev/null 2>&1";
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, &attr, const_cast<char**>(argv), environ), 0);
  posix_spawnattr_destroy(&attr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (LoggedRecords(options_.work_dir) < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(-pid, SIGKILL);  // sh, qtune and its measuring child
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(LoggedRecords(options_.work_dir), 1) << "killed after the first measurement";
  EXPECT_FALSE(std::filesystem::exists(scratch_.Join("m.qtc"))) << "killed before the end";

  auto r = qtune::testing::RunQtuneCli(args + " --json", /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["table"].size(), 2u);
  EXPECT_TRUE(j["table"][0]["replayed"].get<bool>()) << j["table"][0].dump();
  EXPECT_FALSE(j["table"][1]["replayed"].get<bool>()) << j["table"][1].dump();
  EXPECT_EQ(LoggedRecords(options_.work_dir), 2);
}

}  // namespace
}  // namespace qtune::tune
