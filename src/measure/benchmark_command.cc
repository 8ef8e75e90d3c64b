#include "measure/benchmark_command.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "measure/command_template.h"
#include "measure/subprocess.h"

namespace qtune::measure {
namespace {

namespace fs = std::filesystem;

constexpr char kModelPlaceholder[] = "{model}";
constexpr char kReferencePlaceholder[] = "{reference}";
constexpr int kSshConnectionFailed = 255;
// libstdc++'s regex recurses per character: longer lines are cut to keep the stack safe.
constexpr size_t kMaxMatchedLineBytes = 4096;
constexpr size_t kDetailTailBytes = 2000;

std::string Tail(const std::string& s, size_t bytes) {
  return s.size() <= bytes ? s : "..." + s.substr(s.size() - bytes);
}

// The highest NNNNNN of the NNNNNN.log files in `dir`, plus one.
int NextLogNumber(const fs::path& dir) {
  int next = 1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() != 10 || name.substr(6) != ".log") continue;
    char* end = nullptr;
    long n = std::strtol(name.c_str(), &end, 10);
    if (end == name.c_str() + 6 && n >= next) next = static_cast<int>(n) + 1;
  }
  return next;
}

}  // namespace

std::vector<std::optional<double>> MatchedLatencies(const std::regex& regex,
                                                    const std::string& output) {
  std::vector<std::optional<double>> values;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(start, std::min(end - start, kMaxMatchedLineBytes));
    start = end + 1;
    std::smatch match;
    if (!std::regex_search(line, match, regex)) continue;
    for (size_t group = 1; group < match.size(); ++group) {
      if (!match[group].matched) continue;
      std::string text = match[group].str();
      char* parsed_end = nullptr;
      errno = 0;
      double value = std::strtod(text.c_str(), &parsed_end);
      bool valid = errno == 0 && parsed_end == text.c_str() + text.size() && !text.empty() &&
                   std::isfinite(value) && value >= 0;
      values.push_back(valid ? std::optional<double>(value) : std::nullopt);
      break;
    }
  }
  return values;
}

bool ParseLatency(const std::regex& regex, const std::string& output, double* latency_ms) {
  std::vector<std::optional<double>> values = MatchedLatencies(regex, output);
  if (values.empty() || !values.back()) return false;  // the last matching line decides
  *latency_ms = *values.back();
  return true;
}

StatusOr<std::unique_ptr<CommandBenchmark>> CommandBenchmark::Create(
    CommandBenchmarkOptions options) {
  ASSIGN_OR_RETURN(std::vector<std::string> words, SplitCommandTemplate(options.command_template));
  if (options.command_template.find(kModelPlaceholder) == std::string::npos) {
    return InvalidArgumentError("the benchmark command '" + options.command_template +
                                "' has no {model}; put {model} where the model path goes");
  }
  if (options.latency_regex.empty()) options.latency_regex = kDefaultLatencyRegex;
  std::regex regex;
  try {
    regex = std::regex(options.latency_regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return InvalidArgumentError("the latency regex '" + options.latency_regex +
                                "' does not compile: " + e.what());
  }
  if (regex.mark_count() == 0) {
    return InvalidArgumentError("the latency regex '" + options.latency_regex +
                                "' has no capture group; put ( ) around the number in ms");
  }
  int next_log = 1;
  if (!options.log_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.log_dir, ec);
    if (ec) {
      return InvalidArgumentError("cannot create the benchmark log folder '" + options.log_dir +
                                  "': " + ec.message());
    }
    next_log = NextLogNumber(options.log_dir);
  }
  return std::unique_ptr<CommandBenchmark>(
      new CommandBenchmark(std::move(options), std::move(words), std::move(regex), next_log));
}

bool CommandBenchmark::pair_mode() const {
  return options_.command_template.find(kReferencePlaceholder) != std::string::npos;
}

std::vector<std::string> CommandBenchmark::ArgvFor(const std::string& model_path,
                                                   const std::string& reference_path) const {
  return SubstitutePlaceholders(
      words_, {{kModelPlaceholder, model_path},
               {kReferencePlaceholder, reference_path.empty() ? model_path : reference_path}});
}

std::string CommandBenchmark::CommandFor(const std::string& model_path,
                                         const std::string& reference_path) const {
  return ArgvToDisplay(ArgvFor(model_path, reference_path));
}

std::string CommandBenchmark::WriteLog(const std::string& command, const std::string& status,
                                       const std::string& output) {
  if (options_.log_dir.empty()) return "";
  std::string path = (fs::path(options_.log_dir) / fmt::format("{:06d}.log", next_log_++)).string();
  std::ofstream log(path, std::ios::binary);
  log << "$ " << command << "\n# " << status << "\n" << output;
  if (!output.empty() && output.back() != '\n') log << "\n";
  return log ? path : "";
}

Measurement CommandBenchmark::RunOnce(const std::vector<std::string>& argv, double timeout_s,
                                      std::vector<double>* latencies) {
  const std::string command = ArgvToDisplay(argv);
  Measurement m;
  RunOptions run_options;
  run_options.timeout_s = timeout_s;
  run_options.merge_stderr = true;
  StatusOr<RunResult> run = RunSubprocess(argv, run_options);
  if (!run.ok()) {  // the tool could not start (not found, not executable)
    m.failure = FailureKind::kExit;
    m.exit_code = 127;
    m.detail = run.status().message();
    return m;
  }
  std::string status;
  if (run->timed_out) {
    m.failure = FailureKind::kTimeout;
    status = fmt::format("timed out after {} s; the process group was killed", timeout_s);
  } else if (!run->status.exited()) {
    m.failure = FailureKind::kCrash;
    status = "killed by " + run->status.ToString();
  } else if (run->status.exit_code == kSshConnectionFailed) {
    m.failure = FailureKind::kConnection;
    m.exit_code = run->status.exit_code;
    status = "exit code 255 (as ssh reports a failed connection)";
  } else if (run->status.exit_code > 128 && run->status.exit_code < 128 + 32) {
    // A shell's report of a child it ran being killed by signal N: a crash.
    m.failure = FailureKind::kCrash;
    m.exit_code = run->status.exit_code;
    status = fmt::format("exit code {} (killed by signal {} inside the shell)",
                         run->status.exit_code, run->status.exit_code - 128);
  } else if (run->status.exit_code != 0) {
    m.failure = FailureKind::kExit;
    m.exit_code = run->status.exit_code;
    status = run->status.ToString();
  } else if (pair_mode()) {
    std::vector<std::optional<double>> values = MatchedLatencies(latency_regex_, run->output);
    if (values.size() < 2 || !values[0] || !values[1]) {
      m.failure = FailureKind::kUnparsable;
      status = fmt::format(
          "exit code 0, but the output has {} lines matching '{}' (2 valid ones needed: with "
          "{{reference}} the first two are the model's and the reference's)",
          values.size(), options_.latency_regex);
    } else {
      *latencies = {*values[0], *values[1]};
      status =
          fmt::format("exit code 0, latencies {} ms and {} ms (reference)", *values[0], *values[1]);
    }
  } else if (double ms = 0; !ParseLatency(latency_regex_, run->output, &ms)) {
    m.failure = FailureKind::kUnparsable;
    status = "exit code 0, but no latency matches '" + options_.latency_regex + "'";
  } else {
    *latencies = {ms};
    status = fmt::format("exit code 0, latency {} ms", ms);
  }
  status += fmt::format(" ({:.3f} s)", run->wall_s);
  std::string log_path = WriteLog(command, status, run->output);
  if (!m.ok()) {
    m.detail = "`" + command + "`: " + status;
    if (!log_path.empty()) m.detail += "; log " + log_path;
    if (!run->output.empty())
      m.detail += "; output ends with:\n" + Tail(run->output, kDetailTailBytes);
  }
  return m;
}

Measurement CommandBenchmark::Measure(const MeasureRequest& request) {
  double timeout_s = request.timeout_s > 0 ? request.timeout_s : options_.timeout_s;
  Measurement result;
  if (request.candidate_bf16) {
    result.failure = FailureKind::kBuild;
    result.detail =
        "an external benchmark command cannot be told to compute in bf16; measure the bf16 "
        "candidate with the in-process benchmark";
    return result;
  }
  if (request.candidate_path.empty() || request.rounds < 1) {
    result.failure = FailureKind::kUnparsable;
    result.detail = "a measurement needs a candidate path and rounds >= 1";
    return result;
  }
  for (int round = 0; round < request.rounds; ++round) {
    std::vector<double> ms;
    if (pair_mode()) {
      Measurement run =
          RunOnce(ArgvFor(request.candidate_path, request.reference_path), timeout_s, &ms);
      if (!run.ok()) return run;
      result.candidate_ms.push_back(ms[0]);
      if (!request.reference_path.empty()) result.reference_ms.push_back(ms[1]);
      continue;
    }
    Measurement run = RunOnce(ArgvFor(request.candidate_path), timeout_s, &ms);
    if (!run.ok()) return run;
    result.candidate_ms.push_back(ms[0]);
    if (request.reference_path.empty()) continue;
    run = RunOnce(ArgvFor(request.reference_path), timeout_s, &ms);
    if (!run.ok()) {
      run.detail = "reference: " + run.detail;
      return run;
    }
    result.reference_ms.push_back(ms[0]);
  }
  return result;
}

std::string CommandBenchmark::Describe() const { return "command: " + options_.command_template; }

}  // namespace qtune::measure
