// The report library alone: escaping, plot helpers, input detection and its errors, the
// state log reader's tolerance. Whole-run outputs are in report_cli_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/sha256.h"
#include "report/autotune_log.h"
#include "report/html_writer.h"
#include "report/report.h"
#include "report/svg_plot.h"

namespace qtune::report {
namespace {
namespace fs = std::filesystem;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ReportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qtune_report_unit_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string LogLine(const std::string& json) {
    return Sha256Hex(json).substr(0, 16) + " " + json + "\n";
  }
  fs::path dir_;
};

TEST(EscapeTest, EscapesEveryCharacterThatCouldOpenMarkupOrCloseAnAttribute) {
  EXPECT_EQ(Escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(Escape("plain/Conv_1"), "plain/Conv_1");
}

TEST(NiceTicksTest, CoverTheRangeWithOneTwoFiveSteps) {
  std::vector<double> ticks = NiceTicks(0.043, 0.127, 5);
  ASSERT_GE(ticks.size(), 3u);
  EXPECT_LE(ticks.front(), 0.043);
  EXPECT_GE(ticks.back(), 0.127);
  EXPECT_NEAR(ticks[1] - ticks[0], 0.02, 1e-12);
  EXPECT_EQ(NiceTicks(0, 100, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
}

TEST(SvgPlotTest, BarChartEscapesLabelsAndDrawsOneRectPerFiniteValue) {
  std::vector<Bar> bars = {{"<script>&\"x\"", 2.0, false},
                           {"b", std::nullopt, false, "failed: timeout"},
                           {"c", NAN},
                           {"d", 1.0, true, "chosen"}};
  std::string svg = BarChartSvg(bars, {.title = "t & <u>"});
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;&amp;&quot;x&quot;"), std::string::npos);
  EXPECT_NE(svg.find("t &amp; &lt;u&gt;"), std::string::npos);
  EXPECT_EQ(Count(svg, "<rect x=\"") - 1, 2u);  // minus the background
  EXPECT_NE(svg.find("failed: timeout"), std::string::npos);
}

TEST(SvgPlotTest, XyPlotSkipsNonFinitePointsAndSaysNoDataWhenNoneIsLeft) {
  PlotSeries s{"s", PlotSeries::Style::kMarkers, kBlue, {{1, NAN}, {INFINITY, 2}}};
  EXPECT_NE(XyPlotSvg({s}, {}).find("no data"), std::string::npos);
  s.points.push_back({1, 2, "tip <b>"});
  s.points.push_back({2, 3});
  std::string svg = XyPlotSvg({s}, {});
  EXPECT_EQ(svg.find("no data"), std::string::npos);
  EXPECT_EQ(Count(svg, "<circle") - 1, 2u);  // minus the legend's
  EXPECT_NE(svg.find("tip &lt;b&gt;"), std::string::npos);
}

TEST_F(ReportFiles, MissingInputIsNotFoundNamingThePath) {
  auto input = LoadReportInput((dir_ / "nope.json").string());
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.status().code(), StatusCode::kNotFound);
  EXPECT_NE(input.status().message().find("nope.json"), std::string::npos);
}

TEST_F(ReportFiles, FolderWithoutReportJsonSaysWhatItNeeds) {
  auto input = LoadReportInput(dir_.string());
  ASSERT_FALSE(input.ok());
  EXPECT_NE(input.status().message().find("without report.json"), std::string::npos);
}

TEST_F(ReportFiles, NonJsonIsDataLossNamingTheFile) {
  auto input = LoadReportInput(Write("model.onnx", "\x08\x07garbage"));
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(input.status().message().find("model.onnx: not JSON"), std::string::npos);
}

TEST_F(ReportFiles, JsonOfAnotherKindIsRefusedListingWhatIsAccepted) {
  for (const char* text : {"{\"a\": 1}", "[1, 2]", "{\"format\": \"qtune-pattern-cache\"}"}) {
    auto input = LoadReportInput(Write("other.json", text));
    ASSERT_FALSE(input.ok()) << text;
    EXPECT_EQ(input.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(input.status().message().find("other.json"), std::string::npos);
    EXPECT_NE(input.status().message().find("quantize --json"), std::string::npos);
  }
}

TEST_F(ReportFiles, NewerAutotuneReportVersionIsUnimplemented) {
  auto input = LoadReportInput(
      Write("report.json", "{\"format\": \"qtune-autotune-report\", \"version\": 2}"));
  ASSERT_FALSE(input.ok());
  EXPECT_EQ(input.status().code(), StatusCode::kUnimplemented);
}

TEST_F(ReportFiles, MistypedFieldsRenderAsMissingInsteadOfFailing) {
  const std::string path =
      Write("report.json",
            "{\"format\": \"qtune-autotune-report\", \"version\": 1, \"model\": 7, \"patterns\": "
            "[{\"id\": 1, \"schemes\": [{\"scheme\": \"01\", \"status\": \"measured\", "
            "\"candidate_ms\": \"fast\"}]}], \"final\": []}");
  auto input = LoadReportInput(path);
  ASSERT_TRUE(input.ok()) << input.status().ToString();
  auto html = RenderReport(*input);
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  EXPECT_NE(html->find("<svg"), std::string::npos);
}

TEST_F(ReportFiles, StateLogDamagedRecordAndTornTailAreSkippedWithWarnings) {
  const std::string header = LogLine(
      "{\"format_version\":2,\"model_sha256\":\"x\",\"options\":{},\"options_fingerprint\":\"y\","
      "\"qtune_version\":\"0.1.0\",\"type\":\"header\"}");
  const std::string header_id = Sha256Hex("x y").substr(0, 16);  // StateHeader::Id()
  auto record = [&](const std::string& pattern, const std::string& time, const std::string& id) {
    return "{\"attempts\":1,\"candidate_ms\":[2.0,4.0],\"error_detail\":\"\",\"error_kind\":\"\","
           "\"header_id\":\"" +
           id + "\",\"key\":\"k\",\"ok\":true,\"pattern\":\"" + pattern +
           "\",\"reference_ms\":[3.0],\"scheme\":\"01\",\"timestamp\":\"" + time +
           "\",\"type\":\"measurement\"}";
  };
  std::string damaged = LogLine(record("p2", "2026-12-01T13:49:16.000Z", header_id));
  damaged[20] = damaged[20] == 'a' ? 'b' : 'a';  // the checksum no longer holds
  const std::string foreign = LogLine(record("p9", "2026-12-01T13:49:16.500Z", "0123456789abcdef"));
  const std::string path =
      Write("state.jsonl",
            header + LogLine(record("p1", "2026-12-01T13:49:15.000Z", header_id)) + damaged +
                foreign + LogLine(record("p3", "2026-12-01T13:49:17.500Z", header_id)) + "0123");
  auto log = ReadAutotuneLog(path);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_EQ(log->measurements.size(), 2u);
  EXPECT_EQ(log->measurements[0].pattern, "p1");
  EXPECT_DOUBLE_EQ(log->measurements[0].candidate_ms, 3.0);  // median of 2 and 4
  EXPECT_DOUBLE_EQ(log->measurements[0].reference_ms, 3.0);
  EXPECT_EQ(log->measurements[1].line, 5);
  EXPECT_DOUBLE_EQ(log->measurements[1].seconds.value_or(-1), 2.5);
  ASSERT_EQ(log->warnings.size(), 3u);
  EXPECT_NE(log->warnings[0].find("state.jsonl:3: damaged record"), std::string::npos);
  EXPECT_NE(log->warnings[1].find("state.jsonl:4: record of another run skipped"),
            std::string::npos);
  EXPECT_NE(log->warnings[2].find("state.jsonl:6: torn last record"), std::string::npos);
}

// The report reads through the state log's one parser: a log of an older format is refused
// as a resume refuses it, saying which version it is.
TEST_F(ReportFiles, StateLogOfAnOlderFormatIsRefusedNamingTheVersion) {
  const std::string path = Write(
      "state.jsonl",
      LogLine("{\"format_version\":1,\"model_sha256\":\"x\",\"options\":{},"
              "\"options_fingerprint\":\"y\",\"qtune_version\":\"0.1.0\",\"type\":\"header\"}"));
  auto log = ReadAutotuneLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(log.status().message().find("format version 1"), std::string::npos)
      << log.status().message();
}

TEST_F(ReportFiles, StateLogWithoutAHeaderIsDataLoss) {
  auto log = ReadAutotuneLog(Write("state.jsonl", "not a log\n"));
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(log.status().message().find("state.jsonl:1"), std::string::npos);
}

}  // namespace
}  // namespace qtune::report
