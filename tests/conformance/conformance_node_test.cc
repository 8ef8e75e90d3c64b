// Runs the ONNX backend tests that Debian's libonnx-testdata installs — the node tests
// (data/node) and the model folders data/pytorch-converted, data/pytorch-operator and
// data/simple, one TEST each — through runtime::Session, once with the oneDNN tier and once
// with the reference tier only (conformance_runner.h), and classifies each test:
//   PASS         both runs match the expected outputs (rtol 1e-3, atol 1e-7; ints exact);
//   UNSUPPORTED  loading, reading the data, compiling or a kernel said Unimplemented (an
//                op, data type or attribute value qtune does not handle);
//   FAIL         anything else: wrong values, wrong sizes, any other error.
// Per folder: every FAIL must be listed in expected_failures.cc (node) or
// expected_failures_models.cc (the others), and every listed test must fail. Every test in
// the folder's passing list (passing_node_tests.txt, passing_pytorch_converted_tests.txt,
// ...) must PASS (UNSUPPORTED there is a regression); tests that pass but are not listed are
// printed with the command that records them (QTUNE_CONFORMANCE_UPDATE_PASSING=1).
//
// ONNX Runtime is the yardstick: ort_results.txt (tools/ort/conformance_ort.js) says which
// tests ORT 1.30 passes. A test ORT passes and qtune does not must have a reason in
// unsupported_reasons.txt (string tensors, training-only op, ...) or be an expected
// failure. Each one without is a test failure, as are stale reasons and tests missing from
// ort_results.txt; QTUNE_CONFORMANCE_LENIENT=1 only prints and counts them (while a
// kernel is being written).
//
// A test whose Reshape shape, Slice starts, TopK k... arrive as graph inputs runs in
// stages (runtime/dynamic/graph_runner.h). Should a model still be refused for a value
// computed at run time, it is UNSUPPORTED and run again with those inputs bound as
// initializers; that run must pass too (or be a listed failure).
//
// Speed: the whole binary (all four folders, both tiers) takes about a second, so tests run
// one at a time; QTUNE_CONFORMANCE_JOBS=N runs N at a time (std::async, in chunks) should
// the suite grow slow.
// Environment: QTUNE_CONFORMANCE_FILTER=<substring> runs only tests whose
// `<folder>/<test>` name contains it; QTUNE_CONFORMANCE_VERBOSE=1 prints every test's
// outcome and detail; QTUNE_CONFORMANCE_UPDATE_PASSING=1 rewrites the passing lists of the
// folders that ran whole (not with a filter; a listed test that regressed still fails).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "conformance/conformance_runner.h"
#include "conformance/expected_failures.h"
#include "conformance/node_test_case.h"
#include "conformance/ort_yardstick.h"
#include "conformance/passing_list.h"
#include "util/missing_dependency.h"

namespace qtune::conformance {
namespace {

constexpr const char* kDataRoot = "/usr/share/libonnx-testdata/data";
const std::string kConformanceDir = std::string(QTUNE_SOURCE_DIR) + "/tests/conformance";

const char* EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

bool EnvIsOne(const char* name) { return std::string(EnvOr(name, "0")) == "1"; }

// passing_node_tests.txt, passing_pytorch_converted_tests.txt, ...
std::string PassingListPath(const std::string& folder) {
  std::string stem = folder;
  for (char& c : stem) c = c == '-' ? '_' : c;
  return kConformanceDir + "/passing_" + stem + "_tests.txt";
}

// Fails for each listed test that ran and did not pass; prints (or, with `update`, records)
// the tests that pass but are not listed.
void CheckPassingList(const std::string& folder, const std::set<std::string>& listed,
                      const std::map<std::string, std::optional<std::string>>& results,
                      bool filtered, bool update) {
  const std::string path = PassingListPath(folder);
  const std::string file = std::filesystem::path(path).filename();
  PassingListReport report = ComparePassingList(listed, results, filtered);
  for (const std::string& regressed : report.regressed) {
    ADD_FAILURE() << folder << ": listed in " << file << " but no longer passes: " << regressed;
  }
  for (const std::string& name : report.not_run) {
    ADD_FAILURE() << folder << "/" << name << " is listed in " << file << " but not installed";
  }
  if (update) {
    ASSERT_FALSE(filtered) << "QTUNE_CONFORMANCE_UPDATE_PASSING=1 needs the whole suite: "
                              "unset QTUNE_CONFORMANCE_FILTER";
    std::set<std::string> passing;
    for (const auto& [name, failure] : results) {
      if (!failure.has_value()) passing.insert(name);
    }
    Status written = WritePassingList(path, passing, folder);
    ASSERT_TRUE(written.ok()) << written.ToString();
    std::cout << "wrote " << passing.size() << " passing tests to " << path << "\n";
  } else if (!report.newly_passing.empty()) {
    std::cout << report.newly_passing.size() << " " << folder << " tests pass that " << file
              << " does not list:";
    for (const std::string& name : report.newly_passing) std::cout << " " << name;
    std::cout << "\nrecord them: QTUNE_CONFORMANCE_UPDATE_PASSING=1 "
              << "<build>/tests/conformance/conformance_node_test, then commit "
              << "tests/conformance/" << file << "\n";
  }
}

// Checks `results` (by test name within `folder`) against ONNX Runtime's; returns how many
// tests ORT passes that qtune does not, without a reason.
int CheckAgainstOrt(const std::string& folder,
                    const std::map<std::string, std::optional<std::string>>& results,
                    const std::map<std::string, std::string>& expected_failures, bool strict) {
  static const auto ort_results = ReadNamedLines(kConformanceDir + "/ort_results.txt");
  static const auto reasons = ReadNamedLines(kConformanceDir + "/unsupported_reasons.txt");
  for (const auto* file : {&ort_results, &reasons}) {
    if (!file->ok()) {
      if (strict) ADD_FAILURE() << file->status().ToString();
      std::cout << "note: " << file->status().ToString() << "\n";
      return 0;
    }
  }
  std::map<std::string, std::optional<std::string>> qualified;
  for (const auto& [name, failure] : results) qualified[folder + "/" + name] = failure;
  std::set<std::string> explained;
  for (const auto& [name, reason] : expected_failures) explained.insert(folder + "/" + name);
  YardstickReport report = CompareWithOrt(qualified, *ort_results, *reasons, explained);
  auto complain = [&](const std::vector<std::string>& names, const std::string& what) {
    if (names.empty()) return;
    std::cout << names.size() << " " << what << ":\n";
    for (const std::string& name : names) {
      std::cout << "  " << name << "\n";
      if (strict) ADD_FAILURE() << name << ": " << what;
    }
  };
  complain(report.unexplained,
           "tests ORT passes and qtune does not, with no reason in unsupported_reasons.txt");
  complain(report.stale_reasons, "tests pass now: remove them from unsupported_reasons.txt");
  complain(report.missing_from_ort,
           "tests missing from ort_results.txt: rerun node tools/ort/conformance_ort.js "
           "--out tests/conformance/ort_results.txt");
  return static_cast<int>(report.unexplained.size());
}

// Runs `dirs` QTUNE_CONFORMANCE_JOBS at a time; outcomes in `dirs` order.
std::vector<Outcome> RunAll(const std::vector<std::string>& dirs, const RunOptions& options,
                            std::vector<double>* seconds) {
  const size_t jobs = std::max(1, std::atoi(EnvOr("QTUNE_CONFORMANCE_JOBS", "1")));
  std::vector<Outcome> outcomes(dirs.size());
  seconds->assign(dirs.size(), 0);
  for (size_t begin = 0; begin < dirs.size(); begin += jobs) {
    std::vector<std::future<void>> running;
    for (size_t i = begin; i < std::min(begin + jobs, dirs.size()); ++i) {
      running.push_back(std::async(std::launch::async, [&, i] {
        auto start = std::chrono::steady_clock::now();
        outcomes[i] = RunTestFolder(dirs[i], options);
        (*seconds)[i] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }));
    }
    for (auto& job : running) job.get();
  }
  return outcomes;
}

// Runs every test of libonnx-testdata folder `folder` and checks it against the folder's
// expected failures, passing list and ONNX Runtime's results.
void RunFolder(const std::string& folder) {
  const std::string root = std::string(kDataRoot) + "/" + folder;
  if (!std::filesystem::is_directory(root)) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << root << " is missing (install libonnx-testdata)";
  }
  const bool update_passing = EnvIsOne("QTUNE_CONFORMANCE_UPDATE_PASSING");
  auto listed_passing = ReadPassingList(PassingListPath(folder));
  if (update_passing && listed_passing.status().code() == StatusCode::kNotFound) {
    listed_passing = std::set<std::string>();  // a new folder: the update creates its list
  }
  ASSERT_TRUE(listed_passing.ok()) << listed_passing.status().ToString();
  const std::string filter = EnvOr("QTUNE_CONFORMANCE_FILTER", "");
  const bool verbose = EnvIsOne("QTUNE_CONFORMANCE_VERBOSE");
  const auto& expected = ExpectedFailuresIn(folder);

  std::vector<std::string> dirs;
  for (const std::string& dir : ListNodeTests(root)) {
    const std::string name = std::filesystem::path(dir).filename();
    if ((folder + "/" + name).find(filter) != std::string::npos) dirs.push_back(dir);
  }
  std::vector<double> seconds;
  std::vector<Outcome> outcomes = RunAll(dirs, RunOptions{}, &seconds);

  int passed = 0, unsupported = 0, known_failures = 0, constant_passes = 0;
  std::map<std::string, std::vector<std::string>> unsupported_by_op;
  std::map<std::string, std::optional<std::string>> results;  // nullopt: passed
  std::vector<std::pair<double, std::string>> slow;
  for (size_t i = 0; i < dirs.size(); ++i) {
    const std::string name = std::filesystem::path(dirs[i]).filename();
    const Outcome& outcome = outcomes[i];
    results[name] = outcome.verdict == Verdict::kPass ? std::nullopt
                                                      : std::optional<std::string>(outcome.detail);
    if (seconds[i] > 0.5) slow.emplace_back(seconds[i], name);
    const bool listed = expected.count(name) > 0;
    if (verbose) {
      std::cout << VerdictName(outcome.verdict) << " " << (folder == "node" ? "" : folder + "/")
                << name << " " << outcome.detail << "\n";
    }
    switch (outcome.verdict) {
      case Verdict::kPass:
        ++passed;
        EXPECT_FALSE(listed) << name << " passes now: remove it from the expected failures";
        break;
      case Verdict::kUnsupported:
        ++unsupported;
        constant_passes += outcome.passes_with_constant_inputs;
        unsupported_by_op[GroupOf(dirs[i])].push_back(
            name + (outcome.passes_with_constant_inputs ? "*" : ""));
        EXPECT_FALSE(listed) << name << " is unsupported now (" << outcome.detail
                             << "): remove it from the expected failures";
        break;
      case Verdict::kFail:
        if (listed) {
          ++known_failures;
        } else {
          ADD_FAILURE() << folder << "/" << name << " FAILS: " << outcome.detail;
        }
        break;
    }
  }
  for (const auto& [name, reason] : expected) {
    if (filter.empty()) {
      EXPECT_TRUE(results.count(name))
          << folder << "/" << name << " is an expected failure but not installed";
    }
  }
  if (dirs.empty()) return;  // filtered out entirely

  CheckPassingList(folder, *listed_passing, results, !filter.empty(), update_passing);
  const int unexplained =
      CheckAgainstOrt(folder, results, expected, !EnvIsOne("QTUNE_CONFORMANCE_LENIENT"));

  std::cout << folder << ": unsupported tests by op (* = passes with its inputs bound as "
            << "constants; " << constant_passes << " tests):\n";
  for (const auto& [op, names] : unsupported_by_op) {
    std::cout << "  " << op << " (" << names.size() << "):";
    for (const std::string& name : names) std::cout << " " << name;
    std::cout << "\n";
  }
  if (!slow.empty()) {
    std::cout << folder << ": slow tests:";
    for (const auto& [secs, name] : slow) std::cout << " " << name << " " << secs << "s;";
    std::cout << "\n";
  }
  std::cout << "conformance " << folder << ": " << passed << " passed, " << unsupported
            << " unsupported, " << known_failures << " expected failures (of " << dirs.size()
            << "); " << unexplained << " that ORT passes lack a reason" << std::endl;
}

TEST(ConformanceNodeTest, AllNodeTestsPassOrAreKnown) { RunFolder("node"); }
TEST(ConformanceNodeTest, PytorchConvertedTestsPassOrAreKnown) { RunFolder("pytorch-converted"); }
TEST(ConformanceNodeTest, PytorchOperatorTestsPassOrAreKnown) { RunFolder("pytorch-operator"); }
TEST(ConformanceNodeTest, SimpleTestsPassOrAreKnown) { RunFolder("simple"); }

}  // namespace
}  // namespace qtune::conformance
