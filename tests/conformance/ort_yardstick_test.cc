// ort_results.txt / unsupported_reasons.txt: reading them, the comparison
// conformance_node_test makes against ONNX Runtime, and the committed files themselves.
#include "conformance/ort_yardstick.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace qtune::conformance {
namespace {

const std::string kConformanceDir = std::string(QTUNE_SOURCE_DIR) + "/tests/conformance";

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

TEST(OrtYardstickTest, LinesSplitIntoNameAndRestIgnoringComments) {
  std::string path = TempPath("ort_lines.txt");
  std::ofstream(path)
      << "# header\n\nnode/test_abs PASS\n  simple/test_x  ERROR create: no op \r\n";
  auto lines = ReadNamedLines(path);
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  EXPECT_EQ(*lines, (std::map<std::string, std::string>{{"node/test_abs", "PASS"},
                                                        {"simple/test_x", "ERROR create: no op"}}));
}

TEST(OrtYardstickTest, NameWithoutReasonIsRefusedWithItsLine) {
  std::string path = TempPath("reasons_bare.txt");
  std::ofstream(path) << "node/test_a string tensors\nnode/test_b\n";
  auto lines = ReadNamedLines(path);
  EXPECT_EQ(lines.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(lines.status().ToString().find(":2:"), std::string::npos) << lines.status().ToString();
}

TEST(OrtYardstickTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadNamedLines(TempPath("no_such_ort_results.txt")).status().code(),
            StatusCode::kNotFound);
}

TEST(OrtYardstickTest, OnlyOrtPassesWithoutReasonAreUnexplained) {
  std::map<std::string, std::optional<std::string>> results = {
      {"node/test_passes", std::nullopt},
      {"node/test_no_kernel", "compile: Unimplemented: op Foo"},
      {"node/test_string", "read data: string"},
      {"node/test_known_bug", "onednn: values differ"},
      {"node/test_ort_fails_too", "compile: Unimplemented: op Bar"},
      {"simple/test_not_in_ort", "load: Unimplemented"},
      {"node/test_fixed", std::nullopt}};
  std::map<std::string, std::string> ort = {{"node/test_passes", "PASS"},
                                            {"node/test_no_kernel", "PASS"},
                                            {"node/test_string", "PASS"},
                                            {"node/test_known_bug", "PASS"},
                                            {"node/test_ort_fails_too", "ERROR create: no kernel"},
                                            {"node/test_fixed", "PASS"}};
  std::map<std::string, std::string> reasons = {{"node/test_string", "string tensors"},
                                                {"node/test_fixed", "was missing a kernel"}};
  YardstickReport report = CompareWithOrt(results, ort, reasons, {"node/test_known_bug"});
  EXPECT_EQ(report.unexplained,
            std::vector<std::string>{"node/test_no_kernel: compile: Unimplemented: op Foo"});
  EXPECT_EQ(report.stale_reasons, std::vector<std::string>{"node/test_fixed"});
  EXPECT_EQ(report.missing_from_ort, std::vector<std::string>{"simple/test_not_in_ort"});
}

TEST(OrtYardstickTest, CommittedFilesParseAndReasonsNameKnownTests) {
  auto ort = ReadNamedLines(kConformanceDir + "/ort_results.txt");
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  EXPECT_GT(ort->size(), 1000u) << "ort_results.txt should cover all four folders";
  for (const auto& [name, rest] : *ort) {
    const std::string verdict = rest.substr(0, rest.find(' '));
    EXPECT_TRUE(verdict == "PASS" || verdict == "FAIL" || verdict == "ERROR")
        << name << ": " << rest;
  }
  auto reasons = ReadNamedLines(kConformanceDir + "/unsupported_reasons.txt");
  ASSERT_TRUE(reasons.ok()) << reasons.status().ToString();
  for (const auto& [name, reason] : *reasons) {
    EXPECT_EQ(ort->count(name), 1u) << name << " (unsupported_reasons.txt) is not a known test";
  }
}

}  // namespace
}  // namespace qtune::conformance
