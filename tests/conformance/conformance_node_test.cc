// Runs every ONNX backend node test (Debian's libonnx-testdata) through runtime::Session,
// once with the oneDNN tier and once with the reference tier only, and classifies it:
//   PASS         both runs match the expected outputs (rtol 1e-3, atol 1e-7; ints exact);
//   UNSUPPORTED  loading, reading the data, compiling or a kernel said Unimplemented (an
//                op, data type or attribute value qtune does not handle);
//   FAIL         anything else: wrong values, wrong sizes, any other error.
// Every FAIL must be listed in expected_failures.cc, and every listed test must fail.
// Every test in passing_node_tests.txt must PASS (UNSUPPORTED there is a regression: a
// kernel or loader that stopped handling something); tests that pass but are not listed
// are printed with the command that records them (QTUNE_CONFORMANCE_UPDATE_PASSING=1).
//
// qtune compiles for fixed sizes, so a test whose Reshape shape, Slice starts, TopK k...
// arrive as graph inputs is UNSUPPORTED. Such a test is run again with those inputs bound
// as initializers (as they are in real models); that run must pass too (or be a listed
// failure), so the kernels behind those ops are still checked.
//
// Environment: QTUNE_CONFORMANCE_FILTER=<substring> runs only matching tests;
// QTUNE_CONFORMANCE_VERBOSE=1 prints every test's outcome and detail;
// QTUNE_CONFORMANCE_UPDATE_PASSING=1 rewrites passing_node_tests.txt from this run (the
// whole suite only; a listed test that regressed still fails the run).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "conformance/expected_failures.h"
#include "conformance/node_test_case.h"
#include "conformance/passing_list.h"
#include "conformance/tensor_compare.h"
#include "ir/onnx_io.h"
#include "runtime/reference/registry.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"

namespace qtune::conformance {
namespace {

constexpr const char* kNodeTestRoot = "/usr/share/libonnx-testdata/data/node";
const std::string kPassingListPath =
    std::string(QTUNE_SOURCE_DIR) + "/tests/conformance/passing_node_tests.txt";

enum class Verdict { kPass, kUnsupported, kFail };

struct Outcome {
  Verdict verdict = Verdict::kPass;
  std::string detail;  // the error or mismatch; empty on PASS
  // UNSUPPORTED only for inputs computed at run time, and passes with them as constants.
  bool passes_with_constant_inputs = false;
};

Outcome FromStatus(const Status& status, const std::string& stage) {
  Verdict verdict =
      status.code() == StatusCode::kUnimplemented ? Verdict::kUnsupported : Verdict::kFail;
  return {verdict, stage + ": " + status.ToString()};
}

Outcome RunMode(const ir::Graph& graph, const NodeTestData& data, bool use_onednn) {
  const std::string mode = use_onednn ? "onednn" : "reference";
  runtime::SessionOptions options;
  options.use_onednn = use_onednn;
  auto session = runtime::Session::Create(graph, options);
  if (!session.ok()) return FromStatus(session.status(), mode + " create");
  std::map<std::string, std::vector<int64_t>> sizes;
  for (const auto& [name, tensor] : data.inputs) sizes[name] = tensor.sizes();
  auto plan = (*session)->Prepare(sizes);
  if (!plan.ok()) return FromStatus(plan.status(), mode + " compile");
  // A kernel may refuse an attribute or input value it only sees at run time (Dropout's
  // training_mode input): Unimplemented there is UNSUPPORTED too.
  auto outputs = (*session)->Run(data.inputs);
  if (!outputs.ok()) return FromStatus(outputs.status(), mode + " run");
  if (outputs->size() != data.outputs.size()) {
    return {Verdict::kFail, mode + ": " + std::to_string(outputs->size()) + " outputs, expected " +
                                std::to_string(data.outputs.size())};
  }
  for (size_t i = 0; i < data.outputs.size(); ++i) {
    std::string diff = CompareTensors((*outputs)[i].second, data.outputs[i], Tolerance{});
    if (!diff.empty()) {
      return {Verdict::kFail, mode + ": output '" + (*outputs)[i].first + "': " + diff};
    }
  }
  return {};
}

// Both tiers: FAIL if either fails (naming each failing tier), else UNSUPPORTED if either
// is, else PASS.
Outcome RunBothModes(const ir::Graph& graph, const NodeTestData& data) {
  Outcome failed{Verdict::kPass, ""}, result;
  for (bool use_onednn : {true, false}) {
    Outcome mode = RunMode(graph, data, use_onednn);
    if (mode.verdict == Verdict::kFail) {
      failed.verdict = Verdict::kFail;
      failed.detail += (failed.detail.empty() ? "" : " | ") + mode.detail;
    }
    if (mode.verdict == Verdict::kUnsupported && result.verdict == Verdict::kPass) result = mode;
  }
  return failed.verdict == Verdict::kFail ? failed : result;
}

bool NeedsConstantInputs(const Outcome& outcome) {
  return outcome.verdict == Verdict::kUnsupported &&
         outcome.detail.find("computed at run time") != std::string::npos;
}

// Reruns an UNSUPPORTED-for-run-time-inputs test with its inputs after the first (the
// data) as initializers, then, if that is not enough (Range), with all of them.
Outcome RetryWithConstantInputs(const std::string& dir, const NodeTestData& data, Outcome outcome) {
  for (size_t first_constant : {size_t{1}, size_t{0}}) {
    if (data.inputs.size() <= first_constant) continue;
    runtime::NamedTensors constants(data.inputs.begin() + first_constant, data.inputs.end());
    NodeTestData rest{.inputs = {data.inputs.begin(), data.inputs.begin() + first_constant},
                      .outputs = data.outputs};
    auto graph = LoadModelWithConstantInputs(dir + "/model.onnx", constants);
    if (!graph.ok()) {
      return {Verdict::kFail, "binding constant inputs: " + graph.status().ToString()};
    }
    Outcome retry = RunBothModes(**graph, rest);
    if (NeedsConstantInputs(retry)) continue;
    if (retry.verdict == Verdict::kFail) {
      retry.detail = "with inputs bound as constants: " + retry.detail;
      return retry;
    }
    outcome.passes_with_constant_inputs = retry.verdict == Verdict::kPass;
    return outcome;
  }
  return outcome;
}

Outcome RunNodeTest(const std::string& dir) {
  auto graph = ir::LoadModel(dir + "/model.onnx");
  if (!graph.ok()) return FromStatus(graph.status(), "load");
  Outcome result;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("test_data_set_", 0) != 0) continue;
    auto data = ReadNodeTestData(**graph, entry.path());
    if (!data.ok()) return FromStatus(data.status(), "read data");
    Outcome outcome = RunBothModes(**graph, *data);
    if (NeedsConstantInputs(outcome)) outcome = RetryWithConstantInputs(dir, *data, outcome);
    if (outcome.verdict == Verdict::kFail) return outcome;
    if (outcome.verdict == Verdict::kUnsupported) result = outcome;
  }
  return result;
}

// The op an unsupported test is filed under: its single op; or, for multi-node models
// (function expansions), the ops that have no reference kernel, else its first op.
std::string GroupOf(const std::string& dir) {
  std::vector<std::string> ops = ModelOpTypes(dir + "/model.onnx");
  std::set<std::string> distinct, missing;
  for (const std::string& op : ops) {
    if (op == "Constant") continue;
    distinct.insert(op);
    if (runtime::ReferenceRegistry::Get().Find(op) == nullptr) missing.insert(op);
  }
  if (distinct.size() == 1) return *distinct.begin();
  std::string group;
  for (const std::string& op : missing) group += (group.empty() ? "" : "+") + op;
  if (!group.empty()) return group;
  for (const std::string& op : ops) {
    if (op != "Constant") return "(multi-node) " + op;
  }
  return "(unreadable model)";
}

// Fails for each listed test that ran and did not pass; prints (or, with `update`, records)
// the tests that pass but are not listed.
void CheckPassingList(const std::set<std::string>& listed,
                      const std::map<std::string, std::optional<std::string>>& results,
                      bool filtered, bool update) {
  PassingListReport report = ComparePassingList(listed, results, filtered);
  for (const std::string& regressed : report.regressed) {
    ADD_FAILURE() << "listed in passing_node_tests.txt but no longer passes: " << regressed;
  }
  for (const std::string& name : report.not_run) {
    ADD_FAILURE() << name << " is listed in passing_node_tests.txt but not installed";
  }
  if (update) {
    ASSERT_FALSE(filtered) << "QTUNE_CONFORMANCE_UPDATE_PASSING=1 needs the whole suite: "
                              "unset QTUNE_CONFORMANCE_FILTER";
    std::set<std::string> passing;
    for (const auto& [name, failure] : results) {
      if (!failure.has_value()) passing.insert(name);
    }
    Status written = WritePassingList(kPassingListPath, passing);
    ASSERT_TRUE(written.ok()) << written.ToString();
    std::cout << "wrote " << passing.size() << " passing tests to " << kPassingListPath << "\n";
  } else if (!report.newly_passing.empty()) {
    std::cout << report.newly_passing.size()
              << " tests pass that passing_node_tests.txt does not list:";
    for (const std::string& name : report.newly_passing) std::cout << " " << name;
    std::cout << "\nrecord them: QTUNE_CONFORMANCE_UPDATE_PASSING=1 "
              << "<build>/tests/conformance/conformance_node_test, then commit "
              << "tests/conformance/passing_node_tests.txt\n";
  }
}

const char* EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

TEST(ConformanceNodeTest, AllNodeTestsPassOrAreKnown) {
  if (!std::filesystem::is_directory(kNodeTestRoot)) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << kNodeTestRoot << " is missing (install libonnx-testdata)";
  }
  auto listed_passing = ReadPassingList(kPassingListPath);
  ASSERT_TRUE(listed_passing.ok()) << listed_passing.status().ToString();
  const bool update_passing = std::string(EnvOr("QTUNE_CONFORMANCE_UPDATE_PASSING", "0")) == "1";
  const std::string filter = EnvOr("QTUNE_CONFORMANCE_FILTER", "");
  const bool verbose = std::string(EnvOr("QTUNE_CONFORMANCE_VERBOSE", "0")) == "1";
  const auto& expected = ExpectedFailures();

  int passed = 0, unsupported = 0, known_failures = 0, total = 0, constant_passes = 0;
  std::map<std::string, std::vector<std::string>> unsupported_by_op;
  std::set<std::string> ran;
  std::map<std::string, std::optional<std::string>> results;  // nullopt: passed
  std::vector<std::pair<double, std::string>> slow;
  for (const std::string& dir : ListNodeTests(kNodeTestRoot)) {
    const std::string name = std::filesystem::path(dir).filename();
    if (name.find(filter) == std::string::npos) continue;
    ran.insert(name);
    ++total;
    auto start = std::chrono::steady_clock::now();
    Outcome outcome = RunNodeTest(dir);
    results[name] = outcome.verdict == Verdict::kPass ? std::nullopt
                                                      : std::optional<std::string>(outcome.detail);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 0.5) slow.emplace_back(seconds, name);
    const bool listed = expected.count(name) > 0;
    if (verbose) {
      const char* verdicts[] = {"PASS", "UNSUPPORTED", "FAIL"};
      std::cout << verdicts[static_cast<int>(outcome.verdict)] << " " << name << " "
                << outcome.detail << "\n";
    }
    switch (outcome.verdict) {
      case Verdict::kPass:
        ++passed;
        EXPECT_FALSE(listed) << name << " passes now: remove it from expected_failures.cc";
        break;
      case Verdict::kUnsupported:
        ++unsupported;
        constant_passes += outcome.passes_with_constant_inputs;
        unsupported_by_op[GroupOf(dir)].push_back(name +
                                                  (outcome.passes_with_constant_inputs ? "*" : ""));
        EXPECT_FALSE(listed) << name << " is unsupported now (" << outcome.detail
                             << "): remove it from expected_failures.cc";
        break;
      case Verdict::kFail:
        if (listed) {
          ++known_failures;
        } else {
          ADD_FAILURE() << name << " FAILS: " << outcome.detail;
        }
        break;
    }
  }
  for (const auto& [name, reason] : expected) {
    if (filter.empty()) {
      EXPECT_TRUE(ran.count(name))
          << name << " is listed in expected_failures.cc but not installed";
    }
  }

  CheckPassingList(*listed_passing, results, !filter.empty(), update_passing);

  std::cout << "unsupported tests by op (* = passes with its inputs bound as constants; "
            << constant_passes << " tests):\n";
  for (const auto& [op, names] : unsupported_by_op) {
    std::cout << "  " << op << " (" << names.size() << "):";
    for (const std::string& name : names) std::cout << " " << name;
    std::cout << "\n";
  }
  if (!slow.empty()) {
    std::cout << "slow tests:";
    for (const auto& [seconds, name] : slow) std::cout << " " << name << " " << seconds << "s;";
    std::cout << "\n";
  }
  std::cout << "conformance: " << passed << " passed, " << unsupported << " unsupported, "
            << known_failures << " expected failures (of " << total << ")" << std::endl;
}

}  // namespace
}  // namespace qtune::conformance
