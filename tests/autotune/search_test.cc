// End-to-end tests of `qtune autotune` on the bundled fmnist model: the real binary, real
// calibration data, real measurements (in-process) or a deterministic benchmark command
// whose latency is a function of the model file, so interrupted and uninterrupted runs
// can be compared exactly.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "cli/cli_runner.h"
#include "core/file_io.h"
#include "core/sha256.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

extern char** environ;

namespace qtune::autotune {
namespace {
namespace fs = std::filesystem;
using qtune::testing::RunQtuneCli;

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";

// Benchmark scripts for --benchmark command. Each prints a latency that is a function of
// the model file's bytes (100 + cksum mod 997 "ms"), so runs can be compared exactly; the
// prologue makes some of them fail.
const char kLatencyOfFile[] =
    "n=$(cksum < \"$1\" | cut -d' ' -f1)\necho \"\\\"median_ms\\\": $((100 + n % 997))\"\n";
const char kDeterministic[] = "";
// One call in ten kills itself (a crash: transient, retried in the run).
const char kFlaky[] = "[ $(od -An -N2 -tu2 /dev/urandom) -lt 6554 ] && kill -9 $$\n";
// Every candidate fails with exit 7 (not transient); the baselines measure.
const char kFailingCandidates[] = "case \"$1\" in *candidate.onnx) exit 7;; esac\n";
// Each QuantizeLinear node (op_type field, as protobuf writes it) makes the model 0.15 %
// faster: "2000 - 3 per node" ms, then exit (kLatencyOfFile does not run).
const char kEachQuantizerHelpsALittle[] =
    "q=$(grep -aoP '\\x22\\x0eQuantizeLinear' \"$1\" | wc -l)\n"
    "echo \"\\\"median_ms\\\": $((2000 - 3 * q))\"\nexit 0\n";

// The opposite: each QuantizeLinear node makes the model slower, so fp32 is the fastest.
const char kEachQuantizerHurts[] =
    "q=$(grep -aoP '\\x22\\x0eQuantizeLinear' \"$1\" | wc -l)\n"
    "echo \"\\\"median_ms\\\": $((2000 + 3 * q))\"\nexit 0\n";

class AutotuneCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qtune_autotune_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Arguments of a run into work dir `name` (output <name>.onnx).
  std::string Args(const std::string& name, const std::string& extra) const {
    return "autotune " + kModel + " -o " + (dir_ / (name + ".onnx")).string() + " --calib " +
           kCalib + " --calib-samples 64 --work-dir " + (dir_ / name).string() + " " + extra;
  }
  nlohmann::json Report(const std::string& name) const {
    auto text = ReadFile((dir_ / name / "report.json").string());
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? nlohmann::json::parse(*text) : nlohmann::json{};
  }
  std::string OutputSha(const std::string& name) const {
    auto sha = Sha256File((dir_ / (name + ".onnx")).string());
    return sha.ok() ? *sha : "missing";
  }
  // Flags that measure with a script made of `prologue` and kLatencyOfFile.
  std::string CommandFlags(const std::string& prologue) const {
    // One script per prologue: the same flags again name the same file (a warm restart).
    const fs::path script =
        dir_ / ("bench" + std::to_string(std::hash<std::string>{}(prologue) % 100000) + ".sh");
    std::ofstream(script) << "#!/bin/sh\n" << prologue << kLatencyOfFile;
    return "--benchmark command --benchmark-command 'sh " + script.string() +
           " {model}' --mode quick";
  }
  fs::path dir_;
};

std::vector<std::string> BestSchemes(const nlohmann::json& report) {
  std::vector<std::string> schemes;
  for (const auto& p : report["patterns"])
    schemes.push_back(p["id"].get<std::string>() + "=" + p["best_scheme"].get<std::string>());
  return schemes;
}

TEST_F(AutotuneCliTest, InProcessRunWritesAQdqModelAndAReportAndNeverLosesToTheBaselines) {
  auto r = RunQtuneCli(Args("run", "--mode quick --json"), /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report, Report("run"));
  EXPECT_GE(report["leaf_regions"].get<int>(), 4);
  EXPECT_FALSE(report["patterns"].empty());
  EXPECT_TRUE(report["final"]["vs_fp32"]["ok"].get<bool>());
  EXPECT_TRUE(report["final"]["vs_rule"]["ok"].get<bool>());
  EXPECT_GT(report["counts"]["measured"].get<int>(), 0);
  EXPECT_TRUE(fs::exists(dir_ / "run" / "best.onnx"));
  EXPECT_TRUE(fs::exists(dir_ / "run" / "state.jsonl"));
  EXPECT_TRUE(fs::exists(dir_ / "run" / "plan.json"));
  // The tuned model runs, in qtune's engine, and is a QDQ model.
  auto inspect = RunQtuneCli("inspect " + (dir_ / "run.onnx").string() + " --json", false);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.out;
  EXPECT_NE(inspect.out.find("QuantizeLinear"), std::string::npos);
}

TEST_F(AutotuneCliTest, WarmRestartMeasuresNothingAgainAndEndsWithTheSameModel) {
  const std::string flags = CommandFlags(kDeterministic);
  auto first = RunQtuneCli(Args("w", flags));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const nlohmann::json report1 = Report("w");
  const std::string sha1 = OutputSha("w");
  auto second = RunQtuneCli(Args("w", flags));
  ASSERT_EQ(second.exit_code, 0) << second.out;
  const nlohmann::json report2 = Report("w");
  EXPECT_EQ(report2["counts"]["measured"].get<int>(), 0);
  EXPECT_EQ(report2["counts"]["replayed"].get<int>(), report1["counts"]["measured"].get<int>());
  EXPECT_EQ(BestSchemes(report1), BestSchemes(report2));
  EXPECT_EQ(sha1, OutputSha("w"));
}

// No pattern alone gains the 2 % a win needs (fmnist's largest quantizes 10 tensors: 1.5 %);
// all of them together do, and the small-wins step adopts them as one candidate.
TEST_F(AutotuneCliTest, SmallWinsOfSeveralPatternsAreAdoptedTogether) {
  const std::string flags = CommandFlags(kEachQuantizerHelpsALittle) + " --start fp32";
  auto r = RunQtuneCli(Args("s", flags));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json report = Report("s");
  for (const auto& p : report["patterns"]) {
    for (const auto& s : p["schemes"]) EXPECT_FALSE(s.value("adopted", false)) << s.dump();
  }
  ASSERT_FALSE(report["combined"].empty());
  const auto& combined = report["combined"][0];
  EXPECT_TRUE(combined["adopted"].get<bool>()) << combined.dump();
  EXPECT_EQ(combined["parts"].size(), report["patterns"].size());
  EXPECT_LT(combined["ratio"].get<double>(), 0.98);
  EXPECT_FALSE(report["final"]["guard_reverted"].get<bool>());
  EXPECT_GT(report["final"]["speedup_vs_rule"].get<double>(), 1.0);
  EXPECT_GT(report["final"]["quantized_points"].get<int>(),
            report["baseline"]["rule_points"].get<int>());
  auto html = ReadFile((dir_ / "s" / "report.html").string());
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  EXPECT_NE(html->find("Small wins together"), std::string::npos);
  // A warm restart replays the combined measurement too.
  const std::string sha = OutputSha("s");
  auto again = RunQtuneCli(Args("s", flags));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(Report("s")["counts"]["measured"].get<int>(), 0);
  EXPECT_EQ(OutputSha("s"), sha);
}

// Runs the command, kills it with SIGKILL after `delay_ms`; returns true if it finished
// (exit 0) before that.
bool RunAndKill(const std::string& args, int delay_ms) {
  std::string command = std::string(QTUNE_BINARY) + " " + args + " >/dev/null 2>&1";
  pid_t pid = 0;
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  if (posix_spawn(&pid, "/bin/sh", nullptr, &attr, const_cast<char**>(argv), environ) != 0) {
    return false;
  }
  posix_spawnattr_destroy(&attr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(-pid, SIGKILL);  // the whole group: sh, qtune and its benchmark children
  waitpid(pid, &status, 0);
  return false;
}

TEST_F(AutotuneCliTest, KilledAtRandomMomentsResumesToTheUninterruptedResult) {
  const std::string flags = CommandFlags(kDeterministic);
  const auto start = std::chrono::steady_clock::now();
  auto clean = RunQtuneCli(Args("clean", flags));
  ASSERT_EQ(clean.exit_code, 0) << clean.out;
  const int run_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - start)
                                          .count());
  const unsigned seed = static_cast<unsigned>(std::random_device{}());
  SCOPED_TRACE("seed " + std::to_string(seed) + ", uninterrupted run " + std::to_string(run_ms) +
               " ms");
  std::mt19937 rng(seed);
  // Kill points spread from process start into the measurements
  // (a third of it at most: a resumed run replays part of the log and goes faster).
  std::uniform_int_distribution<int> delay(run_ms / 50, run_ms / 3);
  int kills = 0;
  bool done = false;
  for (int attempt = 0; attempt < 40 && !done; ++attempt) {
    done = RunAndKill(Args("killed", flags), delay(rng));
    kills += !done;
  }
  if (!done) {
    auto last = RunQtuneCli(Args("killed", flags));
    ASSERT_EQ(last.exit_code, 0) << last.out;
  }
  EXPECT_GT(kills, 0);
  const nlohmann::json a = Report("clean"), b = Report("killed");
  EXPECT_EQ(BestSchemes(a), BestSchemes(b));
  EXPECT_EQ(OutputSha("clean"), OutputSha("killed"));
  // Every measurement of the clean run happened at most once more in the killed runs'
  // log (the one in flight at each kill), so its log holds at least as many.
  EXPECT_EQ(b["counts"]["measured"].get<int>() + b["counts"]["replayed"].get<int>(),
            a["counts"]["measured"].get<int>());
}

TEST_F(AutotuneCliTest, TransientFailuresAreRetriedAndDoNotChangeTheResult) {
  auto clean = RunQtuneCli(Args("clean", CommandFlags(kDeterministic)));
  ASSERT_EQ(clean.exit_code, 0) << clean.out;
  auto r = RunQtuneCli(Args("flaky", CommandFlags(kFlaky) + " --retries 20"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json a = Report("clean"), b = Report("flaky");
  EXPECT_GT(b["counts"]["retried"].get<int>(), 0);
  EXPECT_EQ(b["counts"]["failed"].get<int>(), 0);
  EXPECT_EQ(BestSchemes(a), BestSchemes(b));
}

TEST_F(AutotuneCliTest, PermanentFailuresAreReportedAndRetriedOnTheNextWarmRestart) {
  auto r = RunQtuneCli(Args("f", CommandFlags(kFailingCandidates)));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json first = Report("f");
  const int failed = first["counts"]["failed"].get<int>();
  EXPECT_GT(failed, 0);
  bool saw_exit7 = false;
  for (const auto& p : first["patterns"]) {
    for (const auto& s : p["schemes"]) saw_exit7 |= s.value("error", "").rfind("exit:7", 0) == 0;
  }
  EXPECT_TRUE(saw_exit7);
  auto again = RunQtuneCli(Args("f", CommandFlags(kFailingCandidates)));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(Report("f")["counts"]["retried_from_log"].get<int>(), failed);
}

TEST_F(AutotuneCliTest, StateLogFromOtherOptionsIsRefusedUntilForceNew) {
  auto r = RunQtuneCli(Args("s", CommandFlags(kDeterministic)));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto other = RunQtuneCli(Args("s", CommandFlags(kDeterministic) + " --seed 5"));
  EXPECT_EQ(other.exit_code, 3) << other.out;
  EXPECT_NE(other.out.find("--force-new"), std::string::npos) << other.out;
  auto forced = RunQtuneCli(Args("s", CommandFlags(kDeterministic) + " --seed 5 --force-new"));
  EXPECT_EQ(forced.exit_code, 0) << forced.out;
  bool kept = false;
  for (const auto& e : fs::directory_iterator(dir_ / "s")) {
    kept |= e.path().filename().string().rfind("state.jsonl.old", 0) == 0;
  }
  EXPECT_TRUE(kept);
}

TEST_F(AutotuneCliTest, TornStateLogTailIsDroppedAndTheRunCompletes) {
  auto r = RunQtuneCli(Args("t", CommandFlags(kDeterministic)));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string log = (dir_ / "t" / "state.jsonl").string();
  auto text = ReadFile(log);
  ASSERT_TRUE(text.ok());
  const size_t cut = text->size() - 17;  // inside the last record
  ASSERT_TRUE(WriteFileAtomic(log, text->substr(0, cut)).ok());
  auto again = RunQtuneCli(Args("t", CommandFlags(kDeterministic)));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("warning"), std::string::npos) << again.out;
  EXPECT_EQ(Report("t")["counts"]["measured"].get<int>(), 1);  // only the torn one
}

TEST_F(AutotuneCliTest, PatternCacheIsWrittenAndSeedsTheNextRun) {
  const std::string cache = (dir_ / "cache.json").string();
  const std::string flags = CommandFlags(kDeterministic) + " --pattern-cache " + cache;
  auto first = RunQtuneCli(Args("c1", flags));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  auto text = ReadFile(cache);
  ASSERT_TRUE(text.ok());
  const nlohmann::json j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["format"], "qtune-pattern-cache");
  ASSERT_FALSE(j["patterns"].empty());
  const nlohmann::json report1 = Report("c1");  // kept: a range-for over a temporary's
  for (const auto& p : report1["patterns"]) {   // member would read freed memory
    if (p["points"].get<int>() == 0) continue;
    // The final scheme of every pattern is the first entry of its cache list.
    EXPECT_EQ(j["patterns"][p["signature"].get<std::string>()][0], p["best_scheme"]);
  }
  auto second = RunQtuneCli(Args("c2", flags));
  ASSERT_EQ(second.exit_code, 0) << second.out;
  // The second run proposes every cached best scheme among its first ones.
  const nlohmann::json report2 = Report("c2");
  for (const auto& p : report2["patterns"]) {
    if (p["points"].get<int>() == 0) continue;
    const auto& cached = j["patterns"][p["signature"].get<std::string>()][0];
    bool proposed = false;
    for (const auto& s : p["schemes"]) proposed |= s["scheme"] == cached;
    EXPECT_TRUE(proposed) << p["id"] << " " << cached;
  }
}

TEST_F(AutotuneCliTest, MalformedPatternCacheIsBadInput) {
  const std::string cache = (dir_ / "cache.json").string();
  ASSERT_TRUE(WriteFileAtomic(cache, "{\"format\": \"something else\"}").ok());
  auto r = RunQtuneCli(Args("m", CommandFlags(kDeterministic) + " --pattern-cache " + cache));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("cache.json"), std::string::npos) << r.out;
}

// --start auto on a back end where fp32 is faster: the search starts from fp32, as --start
// fp32 does. One measurement at a time, the baseline goes first: nothing is set aside.
// (With --parallel, tests/workers/workers_autotune_test.cc.)
TEST_F(AutotuneCliTest, StartAutoThatFindsFp32FasterSearchesFromFp32AsStartFp32Does) {
  const std::string flags = CommandFlags(kEachQuantizerHurts);
  auto automatic = RunQtuneCli(Args("auto", flags + " --start auto"));
  ASSERT_EQ(automatic.exit_code, 0) << automatic.out;
  auto fp32 = RunQtuneCli(Args("fp32", flags + " --start fp32"));
  ASSERT_EQ(fp32.exit_code, 0) << fp32.out;
  const nlohmann::json a = Report("auto"), f = Report("fp32");
  EXPECT_EQ(a["baseline"]["start"], "fp32");
  EXPECT_GT(a["baseline"]["rule_vs_fp32"]["ratio"].get<double>(), 1.0);
  EXPECT_EQ(a["counts"]["speculative_discarded"].get<int>(), 0);
  EXPECT_EQ(a["counts"]["measured"], f["counts"]["measured"]);
  EXPECT_EQ(a["patterns"], f["patterns"]);
  EXPECT_EQ(OutputSha("auto"), OutputSha("fp32"));
}

TEST_F(AutotuneCliTest, ImportQdqSeedsTheSearchWithAQuantizedModelsPlacement) {
  const std::string qdq = (dir_ / "rules.onnx").string();
  auto q = RunQtuneCli("quantize " + kModel + " -o " + qdq + " --calib " + kCalib +
                       " --calib-samples 64");
  ASSERT_EQ(q.exit_code, 0) << q.out;
  auto r = RunQtuneCli(Args("i", CommandFlags(kDeterministic) + " --import-qdq " + qdq));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // A float model has no Q/DQ pair to import.
  auto bad = RunQtuneCli(Args("j", CommandFlags(kDeterministic) + " --import-qdq " + kModel));
  EXPECT_EQ(bad.exit_code, 3) << bad.out;
  EXPECT_NE(bad.out.find("QuantizeLinear"), std::string::npos) << bad.out;
}

// ONNX Runtime as the target, timing candidate and incumbent in one process (pair mode):
// one run per round, and the tuned model is one that ONNX Runtime runs.
TEST_F(AutotuneCliTest, OnnxRuntimeMeasuresEachPairInOneProcess) {
  if (!qtune::testing::OrtAvailable())
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime is not installed";
  const std::string command = "node " + std::string(QTUNE_SOURCE_DIR) +
                              "/tools/ort/ort_bench.js {model} --reference {reference} --json "
                              "--warmup 5 --iters 100 --shape input=1x1x28x28";
  auto r = RunQtuneCli(
      Args("ort", "--mode quick --benchmark command --benchmark-command '" + command + "' --json"),
      /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  EXPECT_NE(report["benchmark"].get<std::string>().find("{reference}"), std::string::npos);
  EXPECT_EQ(report["counts"]["failed"].get<int>(), 0);
  EXPECT_TRUE(report["final"]["vs_fp32"]["ok"].get<bool>());
  EXPECT_TRUE(report["final"]["vs_rule"]["ok"].get<bool>());
  // Quick mode measures 2 rounds: one ort_bench run each, baselines and final included.
  int runs = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "ort" / "logs"))
    runs += entry.is_regular_file();
  EXPECT_EQ(runs, 2 * report["counts"]["measured"].get<int>());
}

TEST_F(AutotuneCliTest, OutputThatIsTheInputModelIsRefused) {
  auto r = RunQtuneCli("autotune " + kModel + " -o " + kModel + " --calib " + kCalib +
                       " --work-dir " + (dir_ / "x").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
}  // namespace qtune::autotune
