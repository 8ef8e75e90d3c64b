// `qtune report` on real outputs: a small autotune, tune and quantize run on the bundled
// fmnist model, then the pages they give. Also the pages autotune and tune write themselves.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/cli_runner.h"
#include "report/report_test_util.h"

namespace qtune::report {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RunQtuneCli;

class ReportCliTest : public ::testing::Test {
 protected:
  // One run of each command for the whole suite (they take seconds each).
  static void SetUpTestSuite() {
    dir_ =
        new fs::path(fs::temp_directory_path() / ("qtune_report_cli_" + std::to_string(getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    const std::string m = kFmnistModel, c = kFmnistCalib;
    auto at = RunQtuneCli("autotune " + m + " -o " + Path("at.onnx") + " --calib " + c +
                          " --calib-samples 64 --mode quick --work-dir " + Path("at"));
    autotune_out_ = new std::string(std::to_string(at.exit_code) + ": " + at.out);
    auto tune = RunQtuneCli("tune " + m + " --calib " + c + " -o " + Path("fmnist.qtc") +
                                " --candidates fp32,int8,int8-fallback --calib-samples 64 "
                                "--iters 3 --rounds 1 --json > " +
                                Path("tune.json"),
                            /*with_stderr=*/false);
    tune_exit_ = tune.exit_code;
    // A target the fallback cannot reach: every layer is measured alone (exit 1, the JSON
    // is printed all the same).
    RunQtuneCli("quantize " + m + " -o " + Path("q.onnx") + " --calib " + c +
                    " --calib-samples 64 --min-sqnr 90 --json > " + Path("quantize.json"),
                /*with_stderr=*/false);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete autotune_out_;
  }
  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }

  static fs::path* dir_;
  static std::string* autotune_out_;
  static int tune_exit_;
};
fs::path* ReportCliTest::dir_ = nullptr;
std::string* ReportCliTest::autotune_out_ = nullptr;
int ReportCliTest::tune_exit_ = -1;

TEST_F(ReportCliTest, AutotuneWritesReportHtmlIntoItsWorkDir) {
  ASSERT_EQ(autotune_out_->substr(0, 2), "0:") << *autotune_out_;
  EXPECT_NE(autotune_out_->find("report    " + Path("at") + "/report.html"), std::string::npos);
  const std::string html = Slurp(Path("at") + "/report.html");
  ExpectSelfContainedPage(html);
  EXPECT_NE(html.find("Best latency against measurements"), std::string::npos);
  EXPECT_NE(html.find("Best latency against time"), std::string::npos);
  // One bar chart per pattern, with the chosen scheme marked.
  auto report = nlohmann::json::parse(Slurp(Path("at") + "/report.json"));
  for (const auto& p : report["patterns"]) {
    EXPECT_NE(html.find("Pattern " + p["id"].get<std::string>() + ": latency of each scheme"),
              std::string::npos);
  }
  EXPECT_NE(html.find("chosen"), std::string::npos);
  EXPECT_GE(CountPlotMarks(html), 20u);
}

TEST_F(ReportCliTest, ReportOfAWorkDirEqualsTheOneAutotuneWrote) {
  auto r = RunQtuneCli("report " + Path("at") + " -o " + Path("at.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("autotune report"), std::string::npos);
  EXPECT_EQ(Slurp(Path("at.html")), Slurp(Path("at") + "/report.html"));
}

TEST_F(ReportCliTest, ReportJsonAloneStillPlotsEverySchemeWithoutATimeAxis) {
  fs::create_directories(Path("bare"));
  fs::copy_file(Path("at") + "/report.json", Path("bare") + "/report.json",
                fs::copy_options::overwrite_existing);
  auto r = RunQtuneCli("report " + Path("bare") + "/report.json -o " + Path("bare.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = Slurp(Path("bare.html"));
  ExpectSelfContainedPage(html);
  EXPECT_EQ(html.find("Best latency against time"), std::string::npos);
  EXPECT_NE(html.find("No state log"), std::string::npos);
}

TEST_F(ReportCliTest, TuneWritesItsReportBesideTheCheckpointAndReportReadsItsJson) {
  ASSERT_EQ(tune_exit_, 0);
  const std::string written = Slurp(Path("fmnist.report.html"));
  ExpectSelfContainedPage(written);
  EXPECT_NE(written.find("Candidates: latency against accuracy"), std::string::npos);
  auto r = RunQtuneCli("report " + Path("tune.json") + " -o " + Path("tune.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = Slurp(Path("tune.html"));
  ExpectSelfContainedPage(html);
  // Every row of the result is in the table, the chosen one highlighted.
  auto result = nlohmann::json::parse(Slurp(Path("tune.json")));
  EXPECT_EQ(result["table"].size(), 3u);
  EXPECT_EQ(CountOf(html, "<tr class=\"highlight\">"), 1u);
  EXPECT_NE(html.find(">" + result["candidate"].get<std::string>() + " x"), std::string::npos);
}

TEST_F(ReportCliTest, QuantizeSummaryShowsEveryLayersSensitivityAgainstTheTarget) {
  auto r = RunQtuneCli("report " + Path("quantize.json") + " -o " + Path("q.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = Slurp(Path("q.html"));
  ExpectSelfContainedPage(html);
  auto summary = nlohmann::json::parse(Slurp(Path("quantize.json")));
  const auto& sensitivity = summary["accuracy_fallback"]["sensitivity"];
  ASSERT_FALSE(sensitivity.empty());
  EXPECT_NE(html.find("SQNR with only this layer quantized"), std::string::npos);
  EXPECT_NE(html.find(">target<"), std::string::npos);
  for (const auto& layer : summary["layers"]) {
    EXPECT_NE(html.find(layer["node"].get<std::string>()), std::string::npos);
  }
}

TEST_F(ReportCliTest, NamesFromTheFilesAreEscaped) {
  auto summary = nlohmann::json::parse(Slurp(Path("quantize.json")));
  const std::string evil = "<script>alert(\"&x'\")</script>";
  std::string first = summary["layers"][0]["node"];
  summary["layers"][0]["node"] = evil;
  for (auto& s : summary["accuracy_fallback"]["sensitivity"]) {
    if (s["node"] == first) s["node"] = evil;
  }
  summary["model"] = evil;
  std::ofstream(Path("evil.json")) << summary.dump();
  auto r = RunQtuneCli("report " + Path("evil.json") + " -o " + Path("evil.html"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = Slurp(Path("evil.html"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;&amp;x&#39;&quot;)&lt;/script&gt;"),
            std::string::npos);
}

TEST_F(ReportCliTest, WrongInputsAreBadInputNamingTheFile) {
  struct Case {
    std::string input;
    std::string message;
  };
  std::ofstream(Path("other.json")) << "{\"hello\": 1}";
  for (const Case& c :
       {Case{kFmnistModel, "fmnist_resnet.onnx: not JSON"},
        Case{Path("other.json"), "other.json: JSON with neither"},
        Case{Path("missing.json"), "missing.json"}, Case{Path("q.onnx"), "q.onnx: not JSON"}}) {
    auto r = RunQtuneCli("report " + c.input + " -o " + Path("x.html"));
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_EQ(r.out.rfind("qtune: error: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(Path("x.html")));
}

TEST_F(ReportCliTest, OutputOverAnInputIsAUsageError) {
  auto r = RunQtuneCli("report " + Path("tune.json") + " -o " + Path("tune.json"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("qtune: error: ", 0), 0u) << r.out;
  r = RunQtuneCli("report " + Path("at") + " -o " + Path("at") + "/report.json");
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

TEST_F(ReportCliTest, HelpNamesTheInputsAndTheOutput) {
  auto r = RunQtuneCli("report --help");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("autotune work dir"), std::string::npos);
  EXPECT_NE(r.out.find("-o,--output"), std::string::npos);
  r = RunQtuneCli("report " + Path("tune.json"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
}  // namespace qtune::report
