#include "measure/measure_worker.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/float_convert.h"
#include "core/json_limits.h"
#include "core/tensor_limits.h"
#include "ir/onnx_io.h"
#include "runtime/benchmark.h"
#include "runtime/session.h"

namespace qtune::measure {
namespace {

using Sizes = std::map<std::string, std::vector<int64_t>>;

struct WorkerRequest {
  std::string candidate;
  std::string reference;
  int rounds = 3;
  int iters = 10;
  int warmup = 3;
  int threads = 1;
  bool candidate_bf16 = false;  // SessionOptions::bf16 for the candidate
  Sizes shapes;
  uint64_t seed = 0;
};

// Identifies a model file's contents cheaply: a rewritten file gets a new size or mtime.
struct ModelKey {
  std::string path;
  int64_t size = -1;
  int64_t mtime_ns = -1;
  int threads = 0;
  bool operator==(const ModelKey&) const = default;
};

struct CachedSession {
  ModelKey key;
  std::unique_ptr<runtime::Session> session;
};

StatusOr<int> ReadInt(const nlohmann::json& request, const char* name, int fallback, int min,
                      int max) {
  auto it = request.find(name);
  if (it == request.end()) return fallback;
  if (!it->is_number_integer() || *it < min || *it > max) {
    return InvalidArgumentError(std::string("\"") + name + "\" must be an integer in [" +
                                std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return it->get<int>();
}

StatusOr<WorkerRequest> ParseRequest(const std::string& line) {
  StatusOr<nlohmann::json> parsed = ParseUntrustedJson(line, "the request");
  if (!parsed.ok()) return InvalidArgumentError(parsed.status().message());
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return InvalidArgumentError("the request is not a JSON object");
  WorkerRequest request;
  auto candidate = j.find("candidate");
  if (candidate == j.end() || !candidate->is_string() || candidate->get<std::string>().empty()) {
    return InvalidArgumentError("\"candidate\" (a model path) is missing");
  }
  request.candidate = candidate->get<std::string>();
  if (auto reference = j.find("reference"); reference != j.end() && !reference->is_null()) {
    if (!reference->is_string()) return InvalidArgumentError("\"reference\" must be a string");
    request.reference = reference->get<std::string>();
  }
  ASSIGN_OR_RETURN(request.rounds, ReadInt(j, "rounds", 3, 1, 100000));
  ASSIGN_OR_RETURN(request.iters, ReadInt(j, "iters", 10, 1, 10000000));
  ASSIGN_OR_RETURN(request.warmup, ReadInt(j, "warmup", 3, 0, 10000000));
  ASSIGN_OR_RETURN(request.threads, ReadInt(j, "threads", 1, 1, 1024));
  if (auto bf16 = j.find("candidate_bf16"); bf16 != j.end()) {
    if (!bf16->is_boolean())
      return InvalidArgumentError("\"candidate_bf16\" must be true or false");
    request.candidate_bf16 = bf16->get<bool>();
  }
  if (auto seed = j.find("seed"); seed != j.end()) {
    if (!seed->is_number_unsigned()) {
      return InvalidArgumentError("\"seed\" must be a non-negative integer");
    }
    request.seed = seed->get<uint64_t>();
  }
  if (auto shapes = j.find("shapes"); shapes != j.end() && !shapes->is_null()) {
    if (!shapes->is_object()) {
      return InvalidArgumentError("\"shapes\" must map input names to size arrays");
    }
    for (const auto& [name, sizes] : shapes->items()) {
      if (!sizes.is_array()) {
        return InvalidArgumentError("\"shapes\": '" + name + "' must be an array of sizes");
      }
      std::vector<int64_t>& out = request.shapes[name];
      for (const nlohmann::json& size : sizes) {
        if (!size.is_number_integer() || size.get<int64_t>() < 0) {
          return InvalidArgumentError("\"shapes\": '" + name +
                                      "' holds something that is not a size");
        }
        out.push_back(size.get<int64_t>());
      }
    }
  }
  return request;
}

StatusOr<ModelKey> KeyOf(const std::string& path, int threads) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return NotFoundError("cannot read model file '" + path + "'");
  return ModelKey{path, static_cast<int64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                  threads};
}

StatusOr<std::unique_ptr<runtime::Session>> LoadSession(const std::string& path, int threads,
                                                        bool bf16 = false) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, ir::LoadModel(path));
  runtime::SessionOptions options;
  options.threads = threads;
  options.bf16 = bf16;
  StatusOr<std::unique_ptr<runtime::Session>> session = runtime::Session::Create(*graph, options);
  if (!session.ok()) return session.status().WithContext(path);
  return session;
}

StatusOr<Sizes> ResolveSizes(const ir::Graph& graph, const Sizes& shapes, const std::string& path) {
  for (const auto& [name, sizes] : shapes) {
    const ir::Value* v = graph.FindValue(name);
    if (v == nullptr || !v->is_graph_input()) {
      return InvalidArgumentError("input sizes are given for '" + name + "', which is not an " +
                                  "input of '" + path + "'");
    }
  }
  Sizes resolved;
  for (const ir::Value* input : graph.inputs()) {
    if (auto it = shapes.find(input->name()); it != shapes.end()) {
      resolved[input->name()] = it->second;
      continue;
    }
    const auto& shape = input->type().shape;
    if (!shape || !shape->is_fully_known()) {
      return InvalidArgumentError("input '" + input->name() + "' of '" + path + "' has sizes " +
                                  (shape ? shape->ToString() : std::string("unknown")) +
                                  "; give them in the benchmark's input sizes");
    }
    resolved[input->name()] = shape->sizes();
  }
  // The limits the CLI applies to --shape, before a plan is compiled for absurd sizes.
  for (const ir::Value* input : graph.inputs()) {
    if (Status s = CheckTensorSize(input->dtype(), resolved[input->name()]); !s.ok()) {
      return InvalidArgumentError("input '" + input->name() + "' of '" + path +
                                  "': " + s.message() + "; give smaller input sizes");
    }
  }
  return resolved;
}

// Floats uniform in [-1, 1]; every other type zeros (a valid index for any table).
StatusOr<runtime::NamedTensors> RandomInputs(const ir::Graph& graph, const Sizes& sizes,
                                             uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  runtime::NamedTensors inputs;
  for (const ir::Value* input : graph.inputs()) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(input->dtype(), sizes.at(input->name())));
    switch (input->dtype()) {
      case DataType::kFloat32:
        for (float& v : t.span<float>()) v = uniform(rng);
        break;
      case DataType::kFloat64:
        for (double& v : t.span<double>()) v = uniform(rng);
        break;
      case DataType::kFloat16:
        for (uint16_t& v : t.span<uint16_t>()) v = FloatToHalf(uniform(rng));
        break;
      case DataType::kBfloat16:
        for (uint16_t& v : t.span<uint16_t>()) v = FloatToBfloat16(uniform(rng));
        break;
      default:
        break;  // zeros from Allocate
    }
    inputs.emplace_back(input->name(), std::move(t));
  }
  return inputs;
}

// One model ready to time: its session (owned or the cached reference) and inputs.
struct Prepared {
  runtime::Session* session = nullptr;
  runtime::NamedTensors inputs;
};

StatusOr<Prepared> Prepare(runtime::Session& session, const WorkerRequest& request,
                           const std::string& path) {
  Prepared prepared{&session, {}};
  ASSIGN_OR_RETURN(Sizes sizes, ResolveSizes(session.graph(), request.shapes, path));
  // FailedPrecondition: sizes known only while the model runs; it compiles in stages
  // during the warm-up runs instead.
  StatusOr<const runtime::Plan*> plan = session.Prepare(sizes);
  if (!plan.ok() && plan.status().code() != StatusCode::kFailedPrecondition) {
    return plan.status().WithContext(path);
  }
  ASSIGN_OR_RETURN(prepared.inputs, RandomInputs(session.graph(), sizes, request.seed));
  return prepared;
}

StatusOr<double> TimeRound(const Prepared& model, int warmup, int iters, const std::string& path) {
  StatusOr<runtime::LatencyStats> stats = runtime::MeasureLatency(
      *model.session, model.inputs, runtime::LatencyOptions{.warmup = warmup, .iters = iters});
  if (!stats.ok()) return stats.status().WithContext(path);
  return stats->median_ms;
}

// A round of a fast model lasts at least this long: 10 runs of a 0.05 ms model are over
// before the machine's noise averages out (fmnist measured 0.91x against itself).
constexpr double kMinRoundMs = 25;
constexpr int kMaxItersPerRound = 20000;

// Runs the warm-up, then returns the timed runs per round for `model`: the request's
// count, or more when one run takes less than kMinRoundMs / that count. One run's time is
// the fastest of up to 3 (a single run descheduled on a busy machine would make a fast
// model look slow); a run of kMinRoundMs or more ends the probing (a slow model costs one).
StatusOr<int> WarmUpAndCountIters(const Prepared& model, const WorkerRequest& request,
                                  const std::string& path) {
  double ms = 0;
  for (int probe = 0; probe < 3; ++probe) {
    ASSIGN_OR_RETURN(double run_ms, TimeRound(model, probe == 0 ? request.warmup : 0, 1, path));
    ms = probe == 0 ? run_ms : std::min(ms, run_ms);
    if (run_ms >= kMinRoundMs) break;
  }
  const double needed = std::ceil(kMinRoundMs / std::max(ms, 1e-4));
  return static_cast<int>(std::clamp(needed, static_cast<double>(request.iters),
                                     static_cast<double>(kMaxItersPerRound)));
}

class Worker {
 public:
  // A build error (load, compile or run): the reply's "build" kind.
  StatusOr<nlohmann::json> Measure(const WorkerRequest& request) {
    ASSIGN_OR_RETURN(std::unique_ptr<runtime::Session> candidate_session,
                     LoadSession(request.candidate, request.threads, request.candidate_bf16));
    ASSIGN_OR_RETURN(Prepared candidate, Prepare(*candidate_session, request, request.candidate));
    std::optional<Prepared> reference;
    if (!request.reference.empty()) {
      ASSIGN_OR_RETURN(runtime::Session * session, ReferenceSession(request));
      ASSIGN_OR_RETURN(reference, Prepare(*session, request, request.reference));
    }
    ASSIGN_OR_RETURN(const int candidate_iters,
                     WarmUpAndCountIters(candidate, request, request.candidate));
    int reference_iters = 0;
    if (reference) {
      ASSIGN_OR_RETURN(reference_iters,
                       WarmUpAndCountIters(*reference, request, request.reference));
    }
    nlohmann::json candidate_ms = nlohmann::json::array();
    nlohmann::json reference_ms = nlohmann::json::array();
    for (int round = 0; round < request.rounds; ++round) {
      ASSIGN_OR_RETURN(double c, TimeRound(candidate, 0, candidate_iters, request.candidate));
      candidate_ms.push_back(c);
      if (reference) {
        ASSIGN_OR_RETURN(double r, TimeRound(*reference, 0, reference_iters, request.reference));
        reference_ms.push_back(r);
      }
    }
    return nlohmann::json{{"ok", true},
                          {"candidate_ms", candidate_ms},
                          {"reference_ms", reference_ms},
                          {"candidate_iters", candidate_iters},
                          {"reference_iters", reference_iters}};
  }

 private:
  StatusOr<runtime::Session*> ReferenceSession(const WorkerRequest& request) {
    ASSIGN_OR_RETURN(ModelKey key, KeyOf(request.reference, request.threads));
    if (!reference_ || !(reference_->key == key)) {
      reference_.reset();  // free the old one before loading the new one
      ASSIGN_OR_RETURN(std::unique_ptr<runtime::Session> session,
                       LoadSession(request.reference, request.threads));
      reference_ = CachedSession{std::move(key), std::move(session)};
    }
    return reference_->session.get();
  }

  std::optional<CachedSession> reference_;
};

nlohmann::json FailureReply(const char* kind, const std::string& detail) {
  return {{"ok", false}, {"kind", kind}, {"detail", detail}};
}

nlohmann::json Handle(Worker& worker, const std::string& line) {
  try {
    StatusOr<WorkerRequest> request = ParseRequest(line);
    if (!request.ok()) return FailureReply("unparsable", request.status().message());
    StatusOr<nlohmann::json> reply = worker.Measure(*request);
    if (!reply.ok()) return FailureReply("build", reply.status().message());
    return *std::move(reply);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc from a huge model
    return FailureReply("build", std::string("the engine failed: ") + e.what());
  }
}

}  // namespace

int RunMeasureWorker(std::FILE* in, std::FILE* out) {
  Worker worker;
  std::unique_ptr<char, decltype(&std::free)> buffer(nullptr, &std::free);
  size_t capacity = 0;
  while (true) {
    char* raw = buffer.release();
    ssize_t length = getline(&raw, &capacity, in);
    buffer.reset(raw);
    if (length < 0) return 0;  // EOF
    std::string line(buffer.get(), static_cast<size_t>(length));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    nlohmann::json reply = Handle(worker, line);
    // Replace invalid UTF-8 in messages (a file name) instead of throwing.
    std::string text = DumpJson(reply);
    std::fprintf(out, "%s\n", text.c_str());
    std::fflush(out);
  }
}

}  // namespace qtune::measure
