// The measuring back ends with real processes: the qtune measure worker on real models,
// and shell commands for the command back end (exit codes, signals, timeouts, parsing).
#include "measure/benchmark.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "measure/benchmark_command.h"
#include "measure/benchmark_inprocess.h"
#include "measure/measure_worker.h"
#include "measure/subprocess.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::measure {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kFmnist = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";

// A fresh folder per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "qtune_benchmark_test_XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& contents) const {
    std::string file = (fs::path(path_) / name).string();
    std::ofstream(file, std::ios::binary) << contents;
    return file;
  }

 private:
  std::string path_;
};

std::unique_ptr<InProcessBenchmark> MakeInProcess(int iters = 5) {
  InProcessBenchmarkOptions options;
  options.worker_executable = QTUNE_BINARY;
  options.warmup = 1;
  options.iters = iters;
  options.input_sizes = {{"input", {1, 1, 28, 28}}};
  options.timeout_s = 60;
  auto benchmark = InProcessBenchmark::Create(options);
  EXPECT_TRUE(benchmark.ok()) << benchmark.status().ToString();
  return benchmark.ok() ? *std::move(benchmark) : nullptr;
}

std::unique_ptr<CommandBenchmark> MakeCommand(const std::string& command_template,
                                              double timeout_s = 60,
                                              const std::string& log_dir = "") {
  CommandBenchmarkOptions options;
  options.command_template = command_template;
  options.timeout_s = timeout_s;
  options.log_dir = log_dir;
  auto benchmark = CommandBenchmark::Create(options);
  EXPECT_TRUE(benchmark.ok()) << benchmark.status().ToString();
  return benchmark.ok() ? *std::move(benchmark) : nullptr;
}

// A template that runs `script` in sh with the paths as its arguments ("$1", "$2"): the
// command runs without a shell, so shell syntax needs one of its own.
std::string Sh(const std::string& script, const std::string& args = "{model}") {
  return "sh -c " + ShellQuote(script) + " sh " + args;
}

MeasureRequest Request(const std::string& candidate, const std::string& reference = "",
                       int rounds = 1) {
  MeasureRequest request;
  request.candidate_path = candidate;
  request.reference_path = reference;
  request.rounds = rounds;
  return request;
}

// True while a process that is not a zombie belongs to process group `pgid`.
bool GroupHasLiveProcess(int pgid) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    if (!std::getline(stat, text)) continue;
    size_t paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(text.substr(paren + 1));
    char state = 0;
    int ppid = 0, pgrp = 0;
    fields >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z') return true;
  }
  return false;
}

bool GroupGoneWithin(int pgid, double seconds) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (GroupHasLiveProcess(pgid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(BenchmarkTest, FailureKindNamesTransienceAndMedian) {
  EXPECT_EQ(FailureKindName(FailureKind::kExit, 3), "exit:3");
  EXPECT_EQ(FailureKindName(FailureKind::kTimeout), "timeout");
  EXPECT_EQ(FailureKindName(FailureKind::kCrash), "crash");
  EXPECT_EQ(FailureKindName(FailureKind::kUnparsable), "unparsable");
  EXPECT_EQ(FailureKindName(FailureKind::kBuild), "build");
  EXPECT_EQ(FailureKindName(FailureKind::kConnection), "connection");
  EXPECT_TRUE(IsTransient(FailureKind::kTimeout));
  EXPECT_TRUE(IsTransient(FailureKind::kCrash));
  EXPECT_TRUE(IsTransient(FailureKind::kConnection));
  EXPECT_FALSE(IsTransient(FailureKind::kExit));
  EXPECT_FALSE(IsTransient(FailureKind::kBuild));
  EXPECT_FALSE(IsTransient(FailureKind::kUnparsable));
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
}

TEST(SubprocessTest, StdinReachesTheChildAndExitStatusIsReported) {
  RunOptions options;
  options.stdin_text = "hello\nworld\n";
  auto run = RunSubprocess({"cat"}, options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->output, "hello\nworld\n");
  EXPECT_EQ(run->status.exit_code, 0);

  run = RunSubprocess(ShellArgv("echo oops >&2; kill -9 $$"), RunOptions{});
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->status.exited());
  EXPECT_EQ(run->status.signal, SIGKILL);
  EXPECT_EQ(run->stderr_text, "oops\n");
}

TEST(SubprocessTest, MissingProgramIsNotFound) {
  auto run = RunSubprocess({"/nonexistent/qtune-no-such-tool"}, RunOptions{});
  EXPECT_EQ(run.status().code(), StatusCode::kNotFound);
}

TEST(SubprocessTest, ShellQuoteKeepsSpacesQuotesAndDollars) {
  std::string word = "a b 'c' \"d\" $HOME `x` \\ ;|&";
  auto run = RunSubprocess(ShellArgv("printf %s " + ShellQuote(word)), RunOptions{});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->output, word);
}

// The measure worker's replies to `requests` (one JSON request a line), run in this process.
std::string WorkerReplies(std::string requests) {
  std::FILE* in = fmemopen(requests.data(), requests.size(), "r");
  char* reply_data = nullptr;
  size_t reply_size = 0;
  std::FILE* out = open_memstream(&reply_data, &reply_size);
  if (in == nullptr || out == nullptr) {
    ADD_FAILURE() << "fmemopen/open_memstream failed";
    return "";
  }
  EXPECT_EQ(RunMeasureWorker(in, out), 0);
  std::fclose(in);
  std::fclose(out);
  std::string replies(reply_data, reply_size);
  free(reply_data);
  return replies;
}

// A fast model gets more timed runs per round than asked for, so a round lasts ~25 ms.
TEST(MeasureWorkerTest, FastModelGetsEnoughRunsPerRound) {
  const nlohmann::json reply = nlohmann::json::parse(
      WorkerReplies("{\"candidate\": \"" + kFmnist + "\", \"reference\": \"" + kFmnist +
                    "\", \"rounds\": 2, \"iters\": 5, \"warmup\": 2, " +
                    "\"shapes\": {\"input\": [1, 1, 28, 28]}}\n"));
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  for (const char* side : {"candidate", "reference"}) {
    const int iters = reply[std::string(side) + "_iters"].get<int>();
    const double ms = reply[std::string(side) + "_ms"][0].get<double>();
    EXPECT_GT(iters, 5) << side;
    EXPECT_GE(iters * ms, 10.0) << side << ": " << iters << " runs of " << ms << " ms";
  }
}

TEST(MeasureWorkerTest, BadRequestsGetRepliesNotACrash) {
  const std::string replies = WorkerReplies(
      "not json\n"
      "{}\n"
      "{\"candidate\": \"m.onnx\", \"rounds\": 0}\n"
      "{\"candidate\": \"m.onnx\", \"shapes\": {\"input\": [1, \"x\"]}}\n"
      "\n"
      "{\"candidate\": \"/nonexistent/m.onnx\"}\n");
  std::vector<std::string> lines;
  std::istringstream stream(replies);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u) << replies;
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(lines[i].find("\"kind\":\"unparsable\""), std::string::npos) << lines[i];
  }
  EXPECT_NE(lines[4].find("\"kind\":\"build\""), std::string::npos) << lines[4];
  EXPECT_NE(lines[4].find("/nonexistent/m.onnx"), std::string::npos) << lines[4];
}

TEST(InProcessBenchmarkTest, ModelAgainstItselfIsFiniteAndNearOne) {
  auto benchmark = MakeInProcess();
  ASSERT_NE(benchmark, nullptr);
  Measurement m = benchmark->Measure(Request(kFmnist, kFmnist, /*rounds=*/3));
  ASSERT_TRUE(m.ok()) << FailureKindName(m.failure, m.exit_code) << ": " << m.detail;
  ASSERT_EQ(m.candidate_ms.size(), 3u);
  ASSERT_EQ(m.reference_ms.size(), 3u);
  for (double ms : m.candidate_ms) EXPECT_TRUE(std::isfinite(ms) && ms > 0) << ms;
  for (double ms : m.reference_ms) EXPECT_TRUE(std::isfinite(ms) && ms > 0) << ms;
  // Loose: the same model on a shared 2-core machine.
  double ratio = Median(m.candidate_ms) / Median(m.reference_ms);
  EXPECT_GT(ratio, 0.25);
  EXPECT_LT(ratio, 4.0);

  // The candidate alone: no reference times.
  m = benchmark->Measure(Request(kFmnist));
  ASSERT_TRUE(m.ok()) << m.detail;
  EXPECT_EQ(m.candidate_ms.size(), 1u);
  EXPECT_TRUE(m.reference_ms.empty());
}

TEST(InProcessBenchmarkTest, FileThatIsNotOnnxIsBuildFailureAndWorkerLives) {
  ScratchDir dir;
  std::string bogus = dir.Write("bogus.onnx", "this is not an ONNX model");
  auto benchmark = MakeInProcess();
  ASSERT_NE(benchmark, nullptr);
  Measurement m = benchmark->Measure(Request(bogus, kFmnist));
  EXPECT_EQ(m.failure, FailureKind::kBuild) << m.detail;
  EXPECT_NE(m.detail.find("bogus.onnx"), std::string::npos) << m.detail;
  int pid = benchmark->worker_pid();
  EXPECT_GT(pid, 0);
  m = benchmark->Measure(Request(kFmnist, kFmnist));
  EXPECT_TRUE(m.ok()) << m.detail;
  EXPECT_EQ(benchmark->worker_pid(), pid);  // the same worker answered
}

TEST(InProcessBenchmarkTest, ReferenceRewrittenOnDiskIsReloaded) {
  ScratchDir dir;
  std::string reference = (fs::path(dir.path()) / "reference.onnx").string();
  fs::copy_file(kFmnist, reference);
  auto benchmark = MakeInProcess();
  ASSERT_NE(benchmark, nullptr);
  Measurement m = benchmark->Measure(Request(kFmnist, reference));
  ASSERT_TRUE(m.ok()) << m.detail;
  dir.Write("reference.onnx", "rewritten: no longer a model");
  m = benchmark->Measure(Request(kFmnist, reference));
  EXPECT_EQ(m.failure, FailureKind::kBuild) << "the cached session was used";
}

TEST(InProcessBenchmarkTest, TimeoutKillsWorkerAndNextMeasurementRestartsIt) {
  auto benchmark = MakeInProcess();
  ASSERT_NE(benchmark, nullptr);
  MeasureRequest request = Request(kFmnist, kFmnist);
  request.timeout_s = 0.001;
  Measurement m = benchmark->Measure(request);
  EXPECT_EQ(m.failure, FailureKind::kTimeout) << m.detail;
  EXPECT_TRUE(IsTransient(m.failure));
  EXPECT_EQ(benchmark->worker_pid(), 0);
  m = benchmark->Measure(Request(kFmnist, kFmnist));
  EXPECT_TRUE(m.ok()) << FailureKindName(m.failure, m.exit_code) << ": " << m.detail;
}

TEST(InProcessBenchmarkTest, WorkerKilledMidMeasurementIsCrashThenRecovers) {
  auto benchmark = MakeInProcess(/*iters=*/50);
  ASSERT_NE(benchmark, nullptr);
  ASSERT_TRUE(benchmark->Measure(Request(kFmnist)).ok());
  int pid = benchmark->worker_pid();
  ASSERT_GT(pid, 0);
  // Far more rounds than finish before the kill; the timeout bounds a failing test.
  MeasureRequest long_request = Request(kFmnist, kFmnist, /*rounds=*/100000);
  long_request.timeout_s = 30;
  std::thread killer([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(pid, SIGKILL);
  });
  Measurement m = benchmark->Measure(long_request);
  killer.join();
  EXPECT_EQ(m.failure, FailureKind::kCrash) << FailureKindName(m.failure) << ": " << m.detail;
  EXPECT_NE(m.detail.find("signal 9"), std::string::npos) << m.detail;
  m = benchmark->Measure(Request(kFmnist, kFmnist));
  EXPECT_TRUE(m.ok()) << m.detail;
  EXPECT_NE(benchmark->worker_pid(), pid);
}

TEST(InProcessBenchmarkTest, MissingWorkerExecutableIsExitFailure) {
  InProcessBenchmarkOptions options;
  options.worker_executable = "/nonexistent/qtune";
  auto benchmark = InProcessBenchmark::Create(options);
  ASSERT_TRUE(benchmark.ok());
  Measurement m = (*benchmark)->Measure(Request(kFmnist));
  EXPECT_EQ(m.failure, FailureKind::kExit);
  EXPECT_EQ(m.exit_code, 127);
  EXPECT_FALSE(InProcessBenchmark::Create(InProcessBenchmarkOptions{}).ok());
}

TEST(CommandBenchmarkTest, QtuneBenchJsonMedianIsParsed) {
  auto benchmark =
      MakeCommand(std::string(QTUNE_BINARY) +
                  " bench {model} --json --warmup 1 --iters 5 --shape input=1x1x28x28");
  ASSERT_NE(benchmark, nullptr);
  Measurement m = benchmark->Measure(Request(kFmnist, kFmnist, /*rounds=*/2));
  ASSERT_TRUE(m.ok()) << FailureKindName(m.failure, m.exit_code) << ": " << m.detail;
  ASSERT_EQ(m.candidate_ms.size(), 2u);
  ASSERT_EQ(m.reference_ms.size(), 2u);
  for (double ms : m.candidate_ms) EXPECT_TRUE(std::isfinite(ms) && ms > 0);
}

TEST(CommandBenchmarkTest, NonZeroExitIsExitWithCode) {
  auto benchmark = MakeCommand("sh -c 'exit 3' {model}");
  Measurement m = benchmark->Measure(Request("m.onnx"));
  EXPECT_EQ(m.failure, FailureKind::kExit);
  EXPECT_EQ(FailureKindName(m.failure, m.exit_code), "exit:3");
}

TEST(CommandBenchmarkTest, Exit255IsConnectionFailure) {
  Measurement m = MakeCommand(Sh("exit 255"))->Measure(Request("m.onnx"));
  EXPECT_EQ(m.failure, FailureKind::kConnection);
  EXPECT_TRUE(IsTransient(m.failure));
}

TEST(CommandBenchmarkTest, KilledBySignalIsCrash) {
  Measurement m = MakeCommand(Sh("kill -9 $$"))->Measure(Request("m.onnx"));
  EXPECT_EQ(m.failure, FailureKind::kCrash) << m.detail;
}

TEST(CommandBenchmarkTest, ToolKilledInsideTheShellIsCrash) {
  // The inner shell dies by SIGKILL; the outer one reports exit 137.
  Measurement m = MakeCommand(Sh("sh -c 'kill -9 $$'"))->Measure(Request("m.onnx"));
  EXPECT_EQ(m.failure, FailureKind::kCrash) << m.detail;
  EXPECT_TRUE(IsTransient(m.failure));
}

TEST(CommandBenchmarkTest, TimeoutKillsTheWholeProcessGroup) {
  ScratchDir dir;
  std::string pid_file = (fs::path(dir.path()) / "pid").string();
  // The shell (the group leader) records its pid, then waits on a child `sleep`.
  auto benchmark = MakeCommand(Sh("echo $$ > " + ShellQuote(pid_file) + "; sleep 10"),
                               /*timeout_s=*/0.2);
  auto start = Clock::now();
  Measurement m = benchmark->Measure(Request("m.onnx"));
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(m.failure, FailureKind::kTimeout) << m.detail;
  EXPECT_LT(seconds, 5.0);
  int pgid = 0;
  std::ifstream(pid_file) >> pgid;
  ASSERT_GT(pgid, 0);
  EXPECT_TRUE(GroupGoneWithin(pgid, 2.0)) << "process group " << pgid << " still runs";
}

TEST(CommandBenchmarkTest, OutputWithoutLatencyIsUnparsable) {
  Measurement m = MakeCommand("echo finished {model}")->Measure(Request("m.onnx"));
  EXPECT_EQ(m.failure, FailureKind::kUnparsable);
  EXPECT_NE(m.detail.find("finished"), std::string::npos) << m.detail;
  m = MakeCommand("echo '\"median_ms\": nan' {model}")->Measure(Request("m.onnx"));
  EXPECT_EQ(m.failure, FailureKind::kUnparsable);
}

TEST(CommandBenchmarkTest, TrtexecLineIsParsedWithTheDefaultRegex) {
  auto benchmark = MakeCommand(
      Sh("printf '[I] Latency: min = 2.0 ms, max = 3.0 ms, mean = 2.5 ms, median = 2.4 ms\\n"
         "[I] GPU Compute Time: min = 0.9 ms, max = 2.1 ms, mean = 1.1 ms, median = 1.05 ms, "
         "percentile(90%%) = 1.3 ms\\n' >&2"));
  Measurement m = benchmark->Measure(Request("m.onnx"));
  ASSERT_TRUE(m.ok()) << m.detail;
  ASSERT_EQ(m.candidate_ms.size(), 1u);
  EXPECT_DOUBLE_EQ(m.candidate_ms[0], 1.05);
}

TEST(CommandBenchmarkTest, PathWithSpacesAndQuotesIsPassedAsOneWord) {
  ScratchDir dir;
  std::string model = dir.Write("my model's \"v2\" $HOME.onnx", "x");
  auto benchmark = MakeCommand(Sh("test -f \"$1\" && printf '\"median_ms\": 2.5\\n'"));
  Measurement m = benchmark->Measure(Request(model));
  ASSERT_TRUE(m.ok()) << m.detail;
  EXPECT_DOUBLE_EQ(m.candidate_ms[0], 2.5);
  m = benchmark->Measure(Request(model + ".missing"));
  EXPECT_EQ(m.failure, FailureKind::kExit);
}

// Issue 24 item 3: the paths are substituted into the argument vector, never into shell
// text. On the old /bin/sh -c path, the double-quoted {model} ran the $(...) of the folder
// name. The folder name holds every character a shell acts on.
TEST(CommandBenchmarkTest, HostilePathsAreOneArgumentEachAndNeverRunAsCode) {
  ScratchDir dir;
  const fs::path folder = fs::path(dir.path()) /
                          "w d'q\"s;x $(touch injected_dollar) `touch "
                          "injected_tick` | touch injected_pipe \n nl";
  ASSERT_TRUE(fs::create_directories(folder));
  const std::string model = (folder / "candidate.onnx").string();
  const std::string reference = (folder / "ref.onnx").string();
  std::ofstream(model) << "m";
  std::ofstream(reference) << "r";
  // Exits 9 unless every argument is an existing file; prints two latencies.
  const std::string script = dir.Write("check.sh",
                                       "for f in \"$@\"; do [ -f \"$f\" ] || exit 9; done\n"
                                       "echo '\"median_ms\": 2'\necho '\"median_ms\": 3'\n");
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());  // where an injected `touch` would create its file
  for (const std::string args : {"{model}", "\"{model}\"", "'{model}'",
                                 "\"{model}\" \"{reference}\"", "{model} '{reference}'"}) {
    const std::string command = "sh " + ShellQuote(script) + " " + args;
    Measurement m = MakeCommand(command)->Measure(Request(model, reference));
    EXPECT_TRUE(m.ok()) << command << ": " << m.detail;
  }
  fs::current_path(cwd);
  for (const char* marker : {"injected_dollar", "injected_tick", "injected_pipe"}) {
    EXPECT_FALSE(fs::exists(fs::path(dir.path()) / marker)) << marker << " was created";
  }
}

TEST(CommandBenchmarkTest, CreateRejectsMissingPlaceholderAndBadRegex) {
  CommandBenchmarkOptions options;
  options.command_template = "trtexec --onnx=model.onnx";
  EXPECT_EQ(CommandBenchmark::Create(options).status().code(), StatusCode::kInvalidArgument);
  options.command_template = "trtexec --onnx={model}";
  options.latency_regex = "median = ([0-9.]+";
  EXPECT_EQ(CommandBenchmark::Create(options).status().code(), StatusCode::kInvalidArgument);
  options.latency_regex = "median = [0-9.]+";  // no capture group
  EXPECT_EQ(CommandBenchmark::Create(options).status().code(), StatusCode::kInvalidArgument);
  options.latency_regex = "took ([0-9.]+) ms";
  auto benchmark = CommandBenchmark::Create(options);
  ASSERT_TRUE(benchmark.ok());
  EXPECT_EQ((*benchmark)->CommandFor("a b.onnx"), "trtexec '--onnx=a b.onnx'");
}

TEST(CommandBenchmarkTest, LogDirGetsOneNumberedLogPerRun) {
  ScratchDir dir;
  std::string logs = (fs::path(dir.path()) / "logs").string();
  auto benchmark = MakeCommand(Sh("echo 'took 1.5 ms'; echo '\"median_ms\": 1.5'"),
                               /*timeout_s=*/60, logs);
  Measurement m = benchmark->Measure(Request("c.onnx", "r.onnx", /*rounds=*/2));
  ASSERT_TRUE(m.ok()) << m.detail;
  EXPECT_TRUE(fs::exists(fs::path(logs) / "000001.log"));
  EXPECT_TRUE(fs::exists(fs::path(logs) / "000004.log"));
  std::ifstream log(fs::path(logs) / "000002.log");
  std::string first_line;
  std::getline(log, first_line);
  EXPECT_NE(first_line.find(" sh r.onnx"), std::string::npos) << first_line;
  // A second benchmark on the same folder numbers on.
  m = MakeCommand(Sh("echo '\"median_ms\": 1'"), 60, logs)->Measure(Request("c.onnx"));
  EXPECT_TRUE(fs::exists(fs::path(logs) / "000005.log"));
}

TEST(CommandBenchmarkTest, ReferencePlaceholderMeasuresThePairInOneRunPerRound) {
  ScratchDir dir;
  std::string logs = (fs::path(dir.path()) / "logs").string();
  // The model's latency first, then the reference's; the paths are the script's arguments.
  auto benchmark = MakeCommand(
      Sh("echo '\"median_ms\": 2'; echo '\"median_ms\": 4'", "{model} {reference}"), 60, logs);
  Measurement m = benchmark->Measure(Request("c.onnx", "r.onnx", /*rounds=*/3));
  ASSERT_TRUE(m.ok()) << m.detail;
  EXPECT_EQ(m.candidate_ms, (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(m.reference_ms, (std::vector<double>{4, 4, 4}));
  EXPECT_TRUE(fs::exists(fs::path(logs) / "000003.log"));
  EXPECT_FALSE(fs::exists(fs::path(logs) / "000004.log"));  // one run per round
  std::ifstream log(fs::path(logs) / "000001.log");
  std::string first_line;
  std::getline(log, first_line);
  EXPECT_NE(first_line.find(" sh c.onnx r.onnx"), std::string::npos) << first_line;
  // No reference: the candidate goes in both places, only its latency is kept.
  m = benchmark->Measure(Request("c.onnx"));
  ASSERT_TRUE(m.ok()) << m.detail;
  EXPECT_EQ(m.candidate_ms, (std::vector<double>{2}));
  EXPECT_TRUE(m.reference_ms.empty());
}

TEST(CommandBenchmarkTest, ReferencePlaceholderWithOneLatencyLineIsUnparsable) {
  auto benchmark = MakeCommand(Sh("echo '\"median_ms\": 2'", "{model} {reference}"));
  Measurement m = benchmark->Measure(Request("c.onnx", "r.onnx"));
  EXPECT_EQ(m.failure, FailureKind::kUnparsable);
  EXPECT_NE(m.detail.find("{reference}"), std::string::npos) << m.detail;
}

// The real peer: ONNX Runtime times both models in one process (tools/ort/ort_bench.js).
TEST(CommandBenchmarkTest, OrtBenchTimesModelAndReferenceTogether) {
  if (!qtune::testing::OrtAvailable())
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime is not installed";
  auto benchmark = MakeCommand("node " + std::string(QTUNE_SOURCE_DIR) +
                               "/tools/ort/ort_bench.js {model} --reference {reference} "
                               "--json --warmup 2 --iters 10 --shape input=1x1x28x28");
  Measurement m = benchmark->Measure(Request(kFmnist, kFmnist, /*rounds=*/2));
  ASSERT_TRUE(m.ok()) << FailureKindName(m.failure, m.exit_code) << ": " << m.detail;
  ASSERT_EQ(m.candidate_ms.size(), 2u);
  ASSERT_EQ(m.reference_ms.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(m.candidate_ms[i], 0);
    EXPECT_GT(m.reference_ms[i], 0);
  }
}

}  // namespace
}  // namespace qtune::measure
