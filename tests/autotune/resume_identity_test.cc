// End-to-end tests of what a warm restart of `qtune autotune` may replay (issue 24 items 3,
// 4, 8 and 10): a measurement belongs to the calibration data's bytes, the options and the
// header it was written under; the work dir is checked before any work; the benchmark
// command never runs a path as shell code. The real binary on the bundled fmnist model,
// measured by a deterministic script (latency = a function of the model file's bytes).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_runner.h"
#include "core/file_io.h"
#include "core/npy.h"
#include "measure/subprocess.h"

namespace qtune::autotune {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RunQtuneCli;

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";

// 100 + cksum mod 997 "ms": the same model file always measures the same.
const char kLatencyOfFile[] =
    "#!/bin/sh\n"
    "for f in \"$@\"; do [ -f \"$f\" ] || exit 9; done\n"
    "n=$(cksum < \"$1\" | cut -d' ' -f1)\necho \"\\\"median_ms\\\": $((100 + n % 997))\"\n";

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ResumeIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qtune_resume_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    script_ = dir_ / "bench.sh";
    std::ofstream(script_) << kLatencyOfFile;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A quick autotune of fmnist into `work` (output beside it), measured by the script.
  std::string Args(const fs::path& work, const std::string& calib, const std::string& extra) {
    return "autotune " + kModel + " -o " + measure::ShellQuote(work.string() + ".onnx") +
           " --calib " + measure::ShellQuote(calib) + " --calib-samples 64 --work-dir " +
           measure::ShellQuote(work.string()) +
           " --mode quick --benchmark command --benchmark-command " +
           measure::ShellQuote("sh " + measure::ShellQuote(script_.string()) + " \"{model}\"") +
           " " + extra;
  }
  nlohmann::json Report(const fs::path& work) {
    auto text = ReadFile((work / "report.json").string());
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? nlohmann::json::parse(*text) : nlohmann::json{};
  }
  int Measured(const fs::path& work) { return Report(work)["counts"]["measured"].get<int>(); }
  int Replayed(const fs::path& work) { return Report(work)["counts"]["replayed"].get<int>(); }

  fs::path dir_;
  fs::path script_;
};

// Item 4: the same path, other bytes. The log of the first run must not be replayed into a
// run calibrated on the new values: it is refused, naming the file, and --force-new starts
// over.
TEST_F(ResumeIdentityTest, CalibrationFileOverwrittenInPlaceIsNotReplayed) {
  const std::string calib = (dir_ / "calib.npy").string();
  fs::copy_file(kCalib, calib);
  const fs::path work = dir_ / "w";
  auto first = RunQtuneCli(Args(work, calib, ""));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  ASSERT_GT(Measured(work), 0);

  auto data = ReadNpy(calib);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  for (float& v : data->span<float>()) v = 0.5f * v + 0.25f;
  ASSERT_TRUE(WriteNpy(calib, *data).ok());

  auto second = RunQtuneCli(Args(work, calib, ""));
  EXPECT_EQ(second.exit_code, 3) << second.out;
  EXPECT_NE(second.out.find("calib_sha256 '" + calib + "'"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("--force-new"), std::string::npos) << second.out;

  auto fresh = RunQtuneCli(Args(work, calib, "--force-new"));
  ASSERT_EQ(fresh.exit_code, 0) << fresh.out;
  EXPECT_EQ(Replayed(work), 0);
  EXPECT_GT(Measured(work), 0);
}

// Item 10: records of a --threads 2 log appended to the log of a --threads 1 run (the same
// model; each line whole, its checksum valid) are skipped, and the run measures everything
// itself.
TEST_F(ResumeIdentityTest, RecordsOfAThreads2LogAreNotReplayedIntoAThreads1Run) {
  const fs::path two = dir_ / "t2";
  const fs::path one = dir_ / "t1";
  auto run2 = RunQtuneCli(Args(two, kCalib, "--threads 2"));
  ASSERT_EQ(run2.exit_code, 0) << run2.out;
  auto run1 = RunQtuneCli(Args(one, kCalib, "--threads 1"));
  ASSERT_EQ(run1.exit_code, 0) << run1.out;
  const int measured = Measured(one);
  ASSERT_GT(measured, 0);

  // The threads-1 log keeps only its header; the threads-2 records follow it.
  const std::string log1 = ReadText(one / "state.jsonl");
  const std::string log2 = ReadText(two / "state.jsonl");
  std::ofstream(one / "state.jsonl", std::ios::binary | std::ios::trunc)
      << log1.substr(0, log1.find('\n') + 1) << log2.substr(log2.find('\n') + 1);

  auto resumed = RunQtuneCli(Args(one, kCalib, "--threads 1"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_EQ(Replayed(one), 0);
  EXPECT_EQ(Measured(one), measured);
  EXPECT_NE(resumed.out.find("record of another run skipped"), std::string::npos) << resumed.out;
}

// Item 8: a work dir that cannot be created is a usage error (exit 2) found before
// calibration. Tests run as root, which ignores permission bits: the parent here is a
// regular file, which stops root too.
TEST_F(ResumeIdentityTest, UnwritableWorkDirIsExit2BeforeCalibration) {
  const fs::path file = dir_ / "file";
  std::ofstream(file) << "not a folder";
  const fs::path work = file / "sub";
  auto r = RunQtuneCli("autotune " + kModel + " -o " + (dir_ / "out.onnx").string() + " --calib " +
                       kCalib + " --work-dir " + work.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--work-dir " + work.string()), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("calibrat"), std::string::npos) << r.out;
  // -o in a folder that does not exist: the same, before calibration.
  r = RunQtuneCli("autotune " + kModel + " -o " + (dir_ / "none" / "out.onnx").string() +
                  " --calib " + kCalib + " --work-dir " + (dir_ / "w").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("-o " + (dir_ / "none" / "out.onnx").string()), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("calibrat"), std::string::npos) << r.out;
  // tune -o under a regular file.
  r = RunQtuneCli("tune " + kModel + " --calib " + kCalib + " -o " + (file / "m.qtc").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.find("calibrat"), std::string::npos) << r.out;
}

// Item 3, end to end: a work dir whose name would run code if a shell ever read it; every
// path the command gets (candidates, baselines) lies in it.
TEST_F(ResumeIdentityTest, HostileWorkDirNameIsNeverRunAsShellCode) {
  const fs::path marker = dir_ / "injected";
  const fs::path work =
      dir_ / "w d'q\"s;x $(touch \"$QTUNE_MARK\") `touch \"$QTUNE_MARK\"` | touch \"$QTUNE_MARK\"";
  auto r = RunQtuneCli(Args(work, kCalib, ""), /*with_stderr=*/true,
                       "QTUNE_MARK=" + measure::ShellQuote(marker.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_GT(Measured(work), 0);
  EXPECT_FALSE(fs::exists(marker)) << "the benchmark command ran a path as shell code";
}

}  // namespace
}  // namespace qtune::autotune
