// CommandBenchmark: measures with any external tool, e.g.
//   trtexec --onnx={model} --iterations=100
//   qtune bench {model} --json
//   sh -c 'scp "$1" board:/tmp/m.onnx && ssh board trtexec --onnx=/tmp/m.onnx' sh {model}
// The template is split into words once and run without a shell (command_template.h):
// {model} becomes the model path inside its word, as plain text, so a path is never
// parsed as code whatever it holds. Each round runs the command for the candidate, then
// for the reference (when the request has one). The latency is read from the run's output
// (stdout and stderr together) with a regex: the last matching line.
//
// Pair mode, when the template also has {reference}: the tool measures both models itself,
// in one process, alternating (e.g. tools/ort/ort_bench.js {model} --reference
// {reference}), which keeps process-to-process variation out of the ratio. Each round is
// one run; the first matching line is the candidate's latency, the second the
// reference's. A request without a reference gets the candidate in both places.
//
// Classification of one run:
//   timeout (the process group is killed)           kTimeout
//   killed by a signal                              kCrash
//   exit code 255 (ssh: connection failed)          kConnection
//   any other non-zero exit code                    kExit (Measurement::exit_code)
//   exit 0, but no match or a non-finite value      kUnparsable
// A tool killed by signal N inside a shell (sh -c ...) shows as the shell's exit 128+N:
// exit codes 129..159 are classified kCrash (transient), like a signal.
// The first failing run ends the measurement; its detail is the tail of that run's output.
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/benchmark.h"

namespace qtune::measure {

// Understands `qtune bench --json` ("median_ms": 1.23) and trtexec's summary line
// "GPU Compute Time: min = ..., median = 1.23 ms, ...".
inline constexpr const char* kDefaultLatencyRegex =
    R"re("median_ms"\s*:\s*([-+0-9.eE]+)|GPU Compute Time:.*median = ([-+0-9.eE]+) ms)re";

struct CommandBenchmarkOptions {
  std::string command_template;  // must contain {model}; split by command_template.h
  // ECMAScript regex matched against each output line; the latency in ms is the first
  // capture group that took part in the match, from the last matching line. Empty:
  // kDefaultLatencyRegex.
  std::string latency_regex;
  double timeout_s = 600;  // per command run; <= 0: none
  // When not empty: each run's command, exit status and output go to a numbered log file
  // there (NNNNNN.log, numbered on from the highest number already present).
  std::string log_dir;
};

class CommandBenchmark : public Benchmark {
 public:
  // InvalidArgument when the template cannot be split (command_template.h) or lacks
  // {model}, or the regex does not compile or has no capture group; an error when log_dir
  // cannot be created.
  static StatusOr<std::unique_ptr<CommandBenchmark>> Create(CommandBenchmarkOptions options);

  Measurement Measure(const MeasureRequest& request) override;
  std::string Describe() const override;  // "command: <template>"

  // The argument vector run for `model_path` (and, in pair mode, `reference_path`; empty:
  // the model path in its place too).
  std::vector<std::string> ArgvFor(const std::string& model_path,
                                   const std::string& reference_path = "") const;
  // ArgvFor() as one line to read (logs, error details); quoted as /bin/sh would read it.
  std::string CommandFor(const std::string& model_path,
                         const std::string& reference_path = "") const;
  bool pair_mode() const;

 private:
  CommandBenchmark(CommandBenchmarkOptions options, std::vector<std::string> words,
                   std::regex latency_regex, int next_log)
      : options_(std::move(options)),
        words_(std::move(words)),
        latency_regex_(std::move(latency_regex)),
        next_log_(next_log) {}
  // One run of `argv`: its latencies (the last matching line's; in pair mode the first two
  // matching lines'), or the failure.
  Measurement RunOnce(const std::vector<std::string>& argv, double timeout_s,
                      std::vector<double>* latencies);
  std::string WriteLog(const std::string& command, const std::string& status,
                       const std::string& output);

  CommandBenchmarkOptions options_;
  std::vector<std::string> words_;  // the template split into words, placeholders kept
  std::regex latency_regex_;
  int next_log_;
};

// Reads the latency from `output` as CommandBenchmarkOptions::latency_regex describes;
// false when no line matches or the value is not a finite number >= 0.
bool ParseLatency(const std::regex& regex, const std::string& output, double* latency_ms);

// The value of every line of `output` that `regex` matches, in order; nullopt where the
// matched text is not a finite number >= 0.
std::vector<std::optional<double>> MatchedLatencies(const std::regex& regex,
                                                    const std::string& output);

}  // namespace qtune::measure
