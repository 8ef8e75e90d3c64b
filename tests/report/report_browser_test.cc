// The report pages in a real browser: headless Chromium (Debian `chromium`) loads each page,
// its DOM after load must hold the plots with their marks, the console must stay silent,
// and a screenshot must come out. Without chromium the tests skip, and fail in CI
// (tests/util/missing_dependency.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/cli_runner.h"
#include "report/report_test_util.h"
#include "util/missing_dependency.h"

namespace qtune::report {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RunQtuneCli;

// The Chromium binary: $QTUNE_CHROMIUM, else chromium or chromium-browser on the PATH.
std::string FindChromium() {
  if (const char* env = std::getenv("QTUNE_CHROMIUM"); env != nullptr && *env != '\0') return env;
  for (const char* name : {"chromium", "chromium-browser"}) {
    if (std::system(("command -v " + std::string(name) + " >/dev/null 2>&1").c_str()) == 0) {
      return name;
    }
  }
  return "";
}

struct BrowserRun {
  int exit_code = -1;
  std::string dom;      // stdout of --dump-dom
  std::string console;  // the CONSOLE lines of stderr: messages the page logged
};

class ReportBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    dir_ = fs::temp_directory_path() /
           ("qtune_report_browser_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs headless Chromium on `page` with `mode` (--dump-dom or --screenshot=FILE).
  BrowserRun Browse(const std::string& page, const std::string& mode) const {
    const std::string command =
        "timeout 120 " + chromium_ +
        " --headless --disable-gpu --no-sandbox --no-first-run --enable-logging=stderr --v=0 "
        "--user-data-dir=" +
        Path("profile") + " --window-size=1100,1400 " + mode + " file://" +
        fs::absolute(page).string() + " 2>" + Path("stderr.txt");
    BrowserRun run;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return run;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.dom.append(buffer, n);
    const int status = pclose(pipe);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream err(Path("stderr.txt"));
    for (std::string line; std::getline(err, line);) {
      if (line.find(":CONSOLE") != std::string::npos) run.console += line + "\n";
    }
    return run;
  }

  // Loads `page` and checks what a reader would see: the page, every plot with marks drawn
  // in it, nothing on the console; then a screenshot of it.
  void ExpectRendersCleanly(const std::string& page) {
    BrowserRun run = Browse(page, "--dump-dom");
    ASSERT_EQ(run.exit_code, 0) << Slurp(Path("stderr.txt"));
    EXPECT_EQ(run.console, "") << "the page logged to the console";
    const std::string source = Slurp(page);
    EXPECT_NE(run.dom.find("<h1>qtune "), std::string::npos) << run.dom.substr(0, 500);
    EXPECT_EQ(CountOf(run.dom, "<svg"), CountOf(source, "<svg"));
    // Every plot in the parsed DOM has drawn marks (bars, points or lines).
    // (A search, not std::regex: libstdc++'s regex recurses per character and overflows
    // the stack on a large page under ASan.)
    size_t plots = 0;
    for (size_t at = run.dom.find("<svg"); at != std::string::npos;
         at = run.dom.find("<svg", at + 1), ++plots) {
      const size_t end = run.dom.find("</svg>", at);
      ASSERT_NE(end, std::string::npos) << "plot " << plots << " is not closed";
      const std::string svg = run.dom.substr(at, end - at);
      const size_t marks =
          CountOf(svg, "<rect") - 1 + CountOf(svg, "<circle") + CountOf(svg, "<path");
      EXPECT_TRUE(marks > 0 || svg.find("no data") != std::string::npos)
          << "plot " << plots << " is empty";
    }
    EXPECT_GE(plots, 2u);
    const std::string png = Path("shot.png");
    BrowserRun shot = Browse(page, "--screenshot=" + png);
    ASSERT_EQ(shot.exit_code, 0) << Slurp(Path("stderr.txt"));
    const std::string image = Slurp(png);
    ASSERT_GT(image.size(), 8u);
    EXPECT_EQ(image.substr(1, 3), "PNG");
    // A blank or failed page compresses to a few KB; text, tables and plots do not.
    EXPECT_GT(image.size(), 30000u);
    if (const char* keep = std::getenv("QTUNE_REPORT_SCREENSHOT_DIR")) {
      fs::copy_file(png, fs::path(keep) / (fs::path(page).stem().string() + ".png"),
                    fs::copy_options::overwrite_existing);
    }
  }

  std::string chromium_;
  fs::path dir_;
};

TEST_F(ReportBrowserTest, ConsoleCheckCatchesAPageThatLogsAnError) {
  if (chromium_.empty()) QTUNE_SKIP_OR_FAIL_IN_CI() << "chromium is not installed";
  std::ofstream(Path("broken.html"))
      << "<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>";
  BrowserRun run = Browse(Path("broken.html"), "--dump-dom");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.console.find("undefinedFunction"), std::string::npos)
      << "the console check would miss errors";
}

TEST_F(ReportBrowserTest, AutotuneReportRendersWithPlotsAndNoConsoleErrors) {
  if (chromium_.empty()) QTUNE_SKIP_OR_FAIL_IN_CI() << "chromium is not installed";
  auto r = RunQtuneCli("autotune " + kFmnistModel + " -o " + Path("at.onnx") + " --calib " +
                       kFmnistCalib + " --calib-samples 64 --mode quick --work-dir " + Path("at"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  fs::copy_file(Path("at") + "/report.html", Path("report-autotune.html"));
  ExpectRendersCleanly(Path("report-autotune.html"));
}

// One tune run serves the tune report and the report of its checkpoint.
TEST_F(ReportBrowserTest, TuneCheckpointAndQuantizeReportsRenderWithPlotsAndNoConsoleErrors) {
  if (chromium_.empty()) QTUNE_SKIP_OR_FAIL_IN_CI() << "chromium is not installed";
  auto r = RunQtuneCli("tune " + kFmnistModel + " --calib " + kFmnistCalib + " -o " +
                       Path("fmnist.qtc") +
                       " --candidates fp32,int8 --calib-samples 64 --iters 3 --rounds 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  fs::copy_file(Path("fmnist.report.html"), Path("report-tune.html"));
  ExpectRendersCleanly(Path("report-tune.html"));
  r = RunQtuneCli("report " + Path("fmnist.qtc") + " -o " + Path("report-checkpoint.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ExpectRendersCleanly(Path("report-checkpoint.html"));
  RunQtuneCli("quantize " + kFmnistModel + " -o " + Path("q.onnx") + " --calib " + kFmnistCalib +
                  " --calib-samples 64 --min-sqnr 90 --json > " + Path("q.json"),
              /*with_stderr=*/false);
  r = RunQtuneCli("report " + Path("q.json") + " -o " + Path("report-quantize.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ExpectRendersCleanly(Path("report-quantize.html"));
}

}  // namespace
}  // namespace qtune::report
