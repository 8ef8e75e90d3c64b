// `qtune autotune` with hostile bytes (issue 24 items 2 and 11), end to end with a scripted
// benchmark command (as search_test.cc):
//  * a command whose failure message holds a Latin-1 byte (0xE9) made autotune finish the
//    search and then exit 1 with "[json.exception.type_error.316] invalid UTF-8 byte",
//    without report.json or report.html, and every rerun failed the same way;
//  * a state log with a valid header followed by megabytes of junk ran, but printed one
//    warning per junk line and wrote each into report.html (40 902 lines, 3.4 MB).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "cli/cli_runner.h"
#include "core/file_io.h"
#include "core/json_limits.h"

namespace qtune::autotune {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RunQtuneCli;

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";

// Candidates fail with a message holding 0xE9 (octal 351) and exit 7; the baselines print a
// latency that is a function of the model's bytes.
const char kScript[] =
    "#!/bin/sh\n"
    "case \"$1\" in *candidate.onnx) printf 'caf\\351: no such d\\351vice\\n'; exit 7;; esac\n"
    "n=$(cksum < \"$1\" | cut -d' ' -f1)\necho \"\\\"median_ms\\\": $((100 + n % 997))\"\n";

class AutotuneHostileBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: the error in report.json is the failure's first 300 bytes, paths included.
    static int test_number = 0;
    dir_ = fs::temp_directory_path() /
           ("qtune_ab" + std::to_string(getpid()) + "_" + std::to_string(test_number++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "bench.sh") << kScript;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Args(const std::string& name) const {
    return "autotune " + kModel + " -o " + (dir_ / (name + ".onnx")).string() + " --calib " +
           kCalib + " --calib-samples 64 --work-dir " + (dir_ / name).string() +
           " --benchmark command --benchmark-command 'sh " + (dir_ / "bench.sh").string() +
           " {model}' --mode quick";
  }
  // report.json, parsed as qtune parses outside JSON (valid UTF-8 or an error).
  nlohmann::json Report(const std::string& name) const {
    auto text = ReadFile((dir_ / name / "report.json").string());
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    if (!text.ok()) return {};
    auto json = ParseUntrustedJson(*text, "report.json");
    EXPECT_TRUE(json.ok()) << json.status().ToString();
    return json.ok() ? *json : nlohmann::json{};
  }
  fs::path dir_;
};

TEST_F(AutotuneHostileBytesTest, FailureMessageThatIsNotUtf8EndsWithAReportAndReplays) {
  auto r = RunQtuneCli(Args("w"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir_ / "w" / "report.html")) << r.out;
  EXPECT_TRUE(fs::exists(dir_ / "w.onnx"));
  const nlohmann::json first = Report("w");
  const int failed = first["counts"]["failed"].get<int>();
  EXPECT_GT(failed, 0);
  bool replaced = false;  // U+FFFD where the 0xE9 was
  for (const auto& p : first["patterns"]) {
    for (const auto& s : p["schemes"]) {
      replaced |= s.value("error", "").find("caf\xef\xbf\xbd: no such d") != std::string::npos;
    }
  }
  EXPECT_TRUE(replaced) << DumpJson(first, 2);
  auto log = ReadFile((dir_ / "w" / "state.jsonl").string());
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("caf\xef\xbf\xbd: no such d\xef\xbf\xbdvice"), std::string::npos);

  auto again = RunQtuneCli(Args("w"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(Report("w")["counts"]["retried_from_log"].get<int>(), failed);
  EXPECT_TRUE(fs::exists(dir_ / "w" / "report.html"));

  auto json = RunQtuneCli(Args("w") + " --json", /*with_stderr=*/false);
  ASSERT_EQ(json.exit_code, 0) << json.out;
  EXPECT_TRUE(ParseUntrustedJson(json.out, "stdout").ok());
}

TEST_F(AutotuneHostileBytesTest, StateLogWithMegabytesOfJunkWarnsInAFewLines) {
  auto r = RunQtuneCli(Args("j"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto clean_html = fs::file_size(dir_ / "j" / "report.html");
  // About 20 000 junk lines of random bytes (no newline inside a line) after the records.
  {
    std::ofstream log(dir_ / "j" / "state.jsonl", std::ios::app | std::ios::binary);
    std::mt19937 rng(24);
    for (int line = 0; line < 20000; ++line) {
      std::string junk(1 + rng() % 200, ' ');
      for (char& c : junk) {
        c = static_cast<char>(1 + rng() % 255);
        if (c == '\n') c = 'x';
      }
      log << junk << '\n';
    }
  }
  auto again = RunQtuneCli(Args("j"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  size_t warnings = 0;
  for (size_t at = again.out.find("damaged record skipped"); at != std::string::npos;
       at = again.out.find("damaged record skipped", at + 1)) {
    ++warnings;
  }
  EXPECT_LE(warnings, 6u) << again.out.substr(0, 4000);  // 5, then "... and N more"
  EXPECT_NE(again.out.find("more lines like it (damaged record skipped)"), std::string::npos)
      << again.out.substr(0, 4000);
  EXPECT_LT(again.out.size(), 20000u);
  const auto junk_html = fs::file_size(dir_ / "j" / "report.html");
  EXPECT_LT(junk_html, clean_html + 8000) << "report.html lists every junk line";
  auto report =
      RunQtuneCli("report " + (dir_ / "j").string() + " -o " + (dir_ / "again.html").string());
  ASSERT_EQ(report.exit_code, 0) << report.out;
  EXPECT_LT(fs::file_size(dir_ / "again.html"), clean_html + 8000);
}

}  // namespace
}  // namespace qtune::autotune
