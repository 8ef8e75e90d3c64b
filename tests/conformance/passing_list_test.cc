// passing_node_tests.txt: reading, writing, the comparison conformance_node_test makes,
// and the committed file itself.
#include "conformance/passing_list.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "conformance/expected_failures.h"

namespace qtune::conformance {
namespace {

const std::string kCommittedList =
    std::string(QTUNE_SOURCE_DIR) + "/tests/conformance/passing_node_tests.txt";

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

TEST(PassingListTest, CommentsBlankLinesAndSurroundingSpaceAreIgnored) {
  std::string path = TempPath("passing_comments.txt");
  std::ofstream(path) << "# header\n\ntest_abs\n  test_add \r\n# test_sub\n";
  auto names = ReadPassingList(path);
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (std::set<std::string>{"test_abs", "test_add"}));
}

TEST(PassingListTest, WrittenListReadsBack) {
  std::string path = TempPath("passing_roundtrip.txt");
  std::set<std::string> names = {"test_relu", "test_abs", "test_conv_with_strides_padding"};
  ASSERT_TRUE(WritePassingList(path, names).ok());
  auto read = ReadPassingList(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, names);
}

TEST(PassingListTest, MissingFileIsNotFound) {
  auto names = ReadPassingList(TempPath("no_such_passing_list.txt"));
  EXPECT_EQ(names.status().code(), StatusCode::kNotFound);
}

TEST(PassingListTest, ListedTestThatTurnsUnsupportedIsARegression) {
  std::set<std::string> listed = {"test_abs", "test_add", "test_gone"};
  std::map<std::string, std::optional<std::string>> results = {
      {"test_abs", std::nullopt},
      {"test_add", "onednn run: Unimplemented: Add on int8"},
      {"test_new", std::nullopt},
      {"test_unsupported", "load: Unimplemented: op Foo"}};
  PassingListReport report = ComparePassingList(listed, results, /*filtered=*/false);
  EXPECT_EQ(report.regressed,
            std::vector<std::string>{"test_add: onednn run: Unimplemented: Add on int8"});
  EXPECT_EQ(report.newly_passing, std::vector<std::string>{"test_new"});
  EXPECT_EQ(report.not_run, std::vector<std::string>{"test_gone"});
}

TEST(PassingListTest, FilteredRunDoesNotReportListedTestsItSkipped) {
  std::set<std::string> listed = {"test_abs", "test_add"};
  std::map<std::string, std::optional<std::string>> results = {{"test_abs", std::nullopt}};
  PassingListReport report = ComparePassingList(listed, results, /*filtered=*/true);
  EXPECT_TRUE(report.regressed.empty());
  EXPECT_TRUE(report.newly_passing.empty());
  EXPECT_TRUE(report.not_run.empty());
}

TEST(PassingListTest, CommittedListIsSubstantialAndDisjointFromExpectedFailures) {
  auto names = ReadPassingList(kCommittedList);
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_GT(names->size(), 500u) << kCommittedList;
  for (const auto& [name, reason] : ExpectedFailures()) {
    EXPECT_EQ(names->count(name), 0u) << name << " is both passing and an expected failure";
  }
  for (const std::string& name : *names) {
    EXPECT_EQ(name.rfind("test_", 0), 0u) << "not a node test folder name: " << name;
  }
}

}  // namespace
}  // namespace qtune::conformance
