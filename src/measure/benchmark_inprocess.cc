#include "measure/benchmark_inprocess.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_limits.h"

namespace qtune::measure {
namespace {

Measurement Failure(FailureKind kind, std::string detail, int exit_code = 0) {
  Measurement m;
  m.failure = kind;
  m.exit_code = exit_code;
  m.detail = std::move(detail);
  return m;
}

// Reads a reply's array of per-round medians; false unless it is one finite value per
// round.
bool ReadTimes(const nlohmann::json& reply, const char* name, size_t rounds,
               std::vector<double>& out) {
  auto it = reply.find(name);
  if (it == reply.end() || !it->is_array() || it->size() != rounds) return false;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) return false;
    out.push_back(v.get<double>());
  }
  return true;
}

std::string StringField(const nlohmann::json& reply, const char* name) {
  auto it = reply.find(name);
  return it != reply.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Measurement ParseReply(const std::string& line, const MeasureRequest& request) {
  StatusOr<nlohmann::json> parsed = ParseUntrustedJson(line, "the measure worker's reply");
  nlohmann::json reply = parsed.ok() ? std::move(*parsed) : nlohmann::json();
  if (!reply.is_object() || !reply.contains("ok")) {
    return Failure(FailureKind::kUnparsable,
                   "the measure worker answered '" + line.substr(0, 500) + "'");
  }
  if (reply["ok"] != true) {
    std::string detail = StringField(reply, "detail");
    std::string kind = StringField(reply, "kind");
    if (kind == "build") return Failure(FailureKind::kBuild, detail);
    return Failure(FailureKind::kUnparsable,
                   "the measure worker rejected the request (" + kind + "): " + detail);
  }
  Measurement m;
  size_t rounds = static_cast<size_t>(request.rounds);
  size_t reference_rounds = request.reference_path.empty() ? 0 : rounds;
  if (!ReadTimes(reply, "candidate_ms", rounds, m.candidate_ms) ||
      !ReadTimes(reply, "reference_ms", reference_rounds, m.reference_ms)) {
    return Failure(FailureKind::kUnparsable,
                   "the measure worker answered '" + line.substr(0, 500) + "'");
  }
  return m;
}

}  // namespace

StatusOr<std::unique_ptr<InProcessBenchmark>> InProcessBenchmark::Create(
    InProcessBenchmarkOptions options) {
  if (options.worker_executable.empty()) {
    return InvalidArgumentError("the in-process benchmark needs the qtune executable's path");
  }
  if (options.threads < 1 || options.warmup < 0 || options.iters < 1) {
    return InvalidArgumentError(fmt::format(
        "the in-process benchmark needs threads >= 1, warmup >= 0 and iters >= 1, got {}, {} "
        "and {}",
        options.threads, options.warmup, options.iters));
  }
  return std::unique_ptr<InProcessBenchmark>(new InProcessBenchmark(std::move(options)));
}

InProcessBenchmark::InProcessBenchmark(InProcessBenchmarkOptions options)
    : options_(std::move(options)),
      worker_(std::vector<std::string>{options_.worker_executable, "measure-worker"}) {}

Measurement InProcessBenchmark::Measure(const MeasureRequest& request) {
  if (request.candidate_path.empty() || request.rounds < 1) {
    return Failure(FailureKind::kUnparsable,
                   "a measurement needs a candidate path and rounds >= 1");
  }
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, sizes] : options_.input_sizes) shapes[name] = sizes;
  nlohmann::json line = {{"candidate", request.candidate_path},
                         {"reference", request.reference_path},
                         {"rounds", request.rounds},
                         {"iters", options_.iters},
                         {"warmup", options_.warmup},
                         {"threads", options_.threads},
                         {"candidate_bf16", request.candidate_bf16},
                         {"shapes", shapes},
                         {"seed", options_.seed}};
  double timeout_s = request.timeout_s > 0 ? request.timeout_s : options_.timeout_s;
  StatusOr<std::string> reply = worker_.Exchange(DumpJson(line), timeout_s);
  if (reply.ok()) return ParseReply(*reply, request);

  std::string detail = reply.status().message();
  if (!worker_.stderr_tail().empty()) detail += "; its stderr ends with:\n" + worker_.stderr_tail();
  switch (reply.status().code()) {
    case StatusCode::kDeadlineExceeded:
      return Failure(FailureKind::kTimeout, detail);
    case StatusCode::kUnavailable: {
      const ExitStatus& exit = worker_.last_exit();
      if (exit.exited()) return Failure(FailureKind::kExit, detail, exit.exit_code);
      return Failure(FailureKind::kCrash, detail);
    }
    default:  // the worker could not be started at all
      return Failure(FailureKind::kExit, detail, 127);
  }
}

std::string InProcessBenchmark::Describe() const {
  return fmt::format("inprocess (threads {}, warmup {}, {} iters)", options_.threads,
                     options_.warmup, options_.iters);
}

}  // namespace qtune::measure
