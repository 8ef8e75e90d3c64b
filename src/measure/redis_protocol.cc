#include "measure/redis_protocol.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/json_limits.h"
#include "core/sha256.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace qtune::measure {
namespace {

StatusOr<std::string> Required(const StreamFields& fields, const char* name) {
  const std::string* v = FindField(fields, name);
  if (v == nullptr) return InvalidArgumentError(std::string("field '") + name + "' is missing");
  return *v;
}

StatusOr<int64_t> IntField(const StreamFields& fields, const char* name, int64_t min, int64_t max) {
  ASSIGN_OR_RETURN(std::string text, Required(fields, name));
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < min || value > max) {
    return InvalidArgumentError(fmt::format("field '{}' must be an integer in [{}, {}], not '{}'",
                                            name, min, max, text.substr(0, 40)));
  }
  return value;
}

StatusOr<std::vector<double>> TimesField(const StreamFields& fields, const char* name) {
  ASSIGN_OR_RETURN(std::string text, Required(fields, name));
  StatusOr<nlohmann::json> parsed = ParseUntrustedJson(text, std::string("field '") + name + "'");
  if (!parsed.ok()) return InvalidArgumentError(parsed.status().message());
  const nlohmann::json& j = *parsed;
  if (!j.is_array() || j.size() > 100000) {
    return InvalidArgumentError(std::string("field '") + name + "' is not a JSON array");
  }
  std::vector<double> out;
  for (const nlohmann::json& v : j) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      return InvalidArgumentError(std::string("field '") + name +
                                  "' holds something that is not a latency");
    }
    out.push_back(v.get<double>());
  }
  return out;
}

std::string TimesJson(const std::vector<double>& times) {
  nlohmann::json j = nlohmann::json::array();
  for (double t : times) j.push_back(t);
  return DumpJson(j);
}

}  // namespace

StatusOr<RedisKeys> RedisKeys::ForQueue(const std::string& queue) {
  bool ok = !queue.empty() && queue.size() <= 64;
  for (char c : queue) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  }
  if (!ok) {
    return InvalidArgumentError("--queue '" + queue +
                                "' must be 1 to 64 characters of letters, digits, '_', '.', '-'");
  }
  RedisKeys keys;
  keys.prefix_ = "qtune:" + queue + ":";
  return keys;
}

bool RedisKeys::IsResultsKey(const std::string& key) const {
  const std::string start = prefix_ + "results:";
  if (key.size() <= start.size() || key.size() > start.size() + 128 || key.rfind(start, 0) != 0) {
    return false;
  }
  for (size_t i = start.size(); i < key.size(); ++i) {
    char c = key[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) {
      return false;
    }
  }
  return true;
}

StreamFields EncodeJob(const Job& job) {
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, sizes] : job.shapes) shapes[name] = sizes;
  return {{"v", kRedisProtocolVersion},
          {"job", job.id},
          {"reply", job.reply},
          {"candidate", job.candidate_sha256},
          {"reference", job.reference_sha256},
          {"rounds", std::to_string(job.rounds)},
          {"iters", std::to_string(job.iters)},
          {"warmup", std::to_string(job.warmup)},
          {"timeout_s", fmt::format("{}", job.timeout_s)},
          {"seed", std::to_string(job.seed)},
          {"shapes", DumpJson(shapes)},
          {"machine", job.machine},
          {"candidate_bf16", job.candidate_bf16 ? "1" : "0"},
          {"candidate_kind", job.candidate_planned ? "plan" : "model"},
          {"reference_kind", job.reference_planned ? "plan" : "model"}};
}

StatusOr<Job> ParseJob(const StreamFields& fields, const RedisKeys& keys) {
  ASSIGN_OR_RETURN(std::string version, Required(fields, "v"));
  if (version != kRedisProtocolVersion) {
    return InvalidArgumentError("protocol version '" + version.substr(0, 20) + "' is not " +
                                kRedisProtocolVersion + " (a tuner of another qtune version?)");
  }
  Job job;
  ASSIGN_OR_RETURN(job.id, Required(fields, "job"));
  if (job.id.empty() || job.id.size() > 200) return InvalidArgumentError("field 'job' is bad");
  ASSIGN_OR_RETURN(job.reply, Required(fields, "reply"));
  if (!keys.IsResultsKey(job.reply)) {
    return InvalidArgumentError("field 'reply' is not a results stream of this queue");
  }
  ASSIGN_OR_RETURN(job.candidate_sha256, Required(fields, "candidate"));
  if (!IsSha256Hex(job.candidate_sha256)) {
    return InvalidArgumentError("field 'candidate' is not a SHA-256 in lowercase hex");
  }
  ASSIGN_OR_RETURN(job.reference_sha256, Required(fields, "reference"));
  if (!job.reference_sha256.empty() && !IsSha256Hex(job.reference_sha256)) {
    return InvalidArgumentError("field 'reference' is neither empty nor a SHA-256");
  }
  ASSIGN_OR_RETURN(int64_t rounds, IntField(fields, "rounds", 1, 100000));
  ASSIGN_OR_RETURN(int64_t iters, IntField(fields, "iters", 1, 10000000));
  ASSIGN_OR_RETURN(int64_t warmup, IntField(fields, "warmup", 0, 10000000));
  ASSIGN_OR_RETURN(int64_t seed, IntField(fields, "seed", 0, INT64_MAX));
  job.rounds = static_cast<int>(rounds);
  job.iters = static_cast<int>(iters);
  job.warmup = static_cast<int>(warmup);
  job.seed = static_cast<uint64_t>(seed);
  ASSIGN_OR_RETURN(std::string timeout, Required(fields, "timeout_s"));
  try {
    job.timeout_s = std::stod(timeout);
  } catch (...) {
    job.timeout_s = -1;
  }
  if (!(job.timeout_s > 0 && job.timeout_s <= 86400)) {
    return InvalidArgumentError("field 'timeout_s' is not a number of seconds in (0, 86400]");
  }
  ASSIGN_OR_RETURN(std::string shapes_text, Required(fields, "shapes"));
  StatusOr<nlohmann::json> parsed_shapes = ParseUntrustedJson(shapes_text, "field 'shapes'");
  if (!parsed_shapes.ok()) return InvalidArgumentError(parsed_shapes.status().message());
  const nlohmann::json& shapes = *parsed_shapes;
  if (!shapes.is_object()) {
    return InvalidArgumentError("field 'shapes' is not a JSON object");
  }
  for (const auto& [name, sizes] : shapes.items()) {
    if (!sizes.is_array() || sizes.size() > 16) {
      return InvalidArgumentError("field 'shapes': '" + name + "' is not an array of sizes");
    }
    for (const nlohmann::json& s : sizes) {
      if (!s.is_number_integer() || s.get<int64_t>() < 0 || s.get<int64_t>() > (int64_t{1} << 32)) {
        return InvalidArgumentError("field 'shapes': '" + name + "' holds a bad size");
      }
      job.shapes[name].push_back(s.get<int64_t>());
    }
    // The engine's limit for one tensor (core/tensor_limits.h) with the smallest element:
    // such sizes are refused here, before a measuring child compiles a plan for them.
    const int64_t elements = NumElements(job.shapes[name]);
    if (elements < 0 || elements > kMaxTensorBytes) {
      return InvalidArgumentError(fmt::format(
          "field 'shapes': '{}' has sizes {}, more elements than the {} GiB limit of one "
          "tensor allows",
          name, SizesToString(job.shapes[name]), kMaxTensorBytes >> 30));
    }
  }
  ASSIGN_OR_RETURN(job.machine, Required(fields, "machine"));
  if (const std::string* bf16 = FindField(fields, "candidate_bf16"); bf16 != nullptr) {
    if (*bf16 != "0" && *bf16 != "1") {
      return InvalidArgumentError("field 'candidate_bf16' must be 0 or 1");
    }
    job.candidate_bf16 = *bf16 == "1";
  }
  for (auto [name, planned] : {std::pair{"candidate_kind", &job.candidate_planned},
                               std::pair{"reference_kind", &job.reference_planned}}) {
    const std::string* kind = FindField(fields, name);
    if (kind == nullptr) continue;
    if (*kind != "model" && *kind != "plan") {
      return InvalidArgumentError(std::string("field '") + name + "' must be model or plan");
    }
    *planned = *kind == "plan";
  }
  if (job.reference_planned && job.reference_sha256.empty()) {
    return InvalidArgumentError("field 'reference_kind' is plan but there is no reference");
  }
  return job;
}

StreamFields EncodeResult(const JobResult& r) {
  const Measurement& m = r.measurement;
  std::string kind = m.failure == FailureKind::kExit ? "exit" : FailureKindName(m.failure);
  return {{"v", kRedisProtocolVersion},
          {"job", r.job_id},
          {"worker", r.worker},
          {"machine", r.machine},
          {"kind", kind},
          {"exit_code", std::to_string(m.exit_code)},
          {"detail", m.detail.substr(0, 4000)},
          {"candidate_ms", TimesJson(m.candidate_ms)},
          {"reference_ms", TimesJson(m.reference_ms)}};
}

StatusOr<JobResult> ParseResult(const StreamFields& fields) {
  ASSIGN_OR_RETURN(std::string version, Required(fields, "v"));
  if (version != kRedisProtocolVersion) {
    return InvalidArgumentError("protocol version '" + version.substr(0, 20) + "' is not " +
                                kRedisProtocolVersion);
  }
  JobResult r;
  ASSIGN_OR_RETURN(r.job_id, Required(fields, "job"));
  ASSIGN_OR_RETURN(r.worker, Required(fields, "worker"));
  ASSIGN_OR_RETURN(r.machine, Required(fields, "machine"));
  ASSIGN_OR_RETURN(std::string kind, Required(fields, "kind"));
  Measurement& m = r.measurement;
  if (!ParseFailureKind(kind, &m.failure)) {
    return InvalidArgumentError("field 'kind' is '" + kind.substr(0, 40) + "', not a failure kind");
  }
  ASSIGN_OR_RETURN(int64_t exit_code, IntField(fields, "exit_code", -1000, 1000));
  m.exit_code = static_cast<int>(exit_code);
  ASSIGN_OR_RETURN(m.detail, Required(fields, "detail"));
  ASSIGN_OR_RETURN(m.candidate_ms, TimesField(fields, "candidate_ms"));
  ASSIGN_OR_RETURN(m.reference_ms, TimesField(fields, "reference_ms"));
  return r;
}

std::string MachineInfo::Fingerprint() const {
  return fmt::format("{} | {} | threads {} | qtune {}", cpu_model, isa, threads, version);
}

MachineInfo ThisMachine(int threads) {
  MachineInfo info;
  info.threads = threads;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(cpuinfo, line)) {
    auto value = [&] {
      size_t colon = line.find(':');
      if (colon == std::string::npos) return std::string();
      size_t start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? std::string() : line.substr(start);
    };
    if (info.cpu_model.empty() && line.rfind("model name", 0) == 0) info.cpu_model = value();
    if (flags.empty() && line.rfind("flags", 0) == 0) {
      std::istringstream words(value());
      for (std::string w; words >> w;) flags.insert(w);
    }
  }
  if (info.cpu_model.empty()) info.cpu_model = "unknown CPU";
  for (const char* f : {"avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni",
                        "avx512_bf16", "amx_int8", "amx_bf16"}) {
    if (flags.count(f)) info.isa += (info.isa.empty() ? "" : " ") + std::string(f);
  }
  return info;
}

std::string EncodeHeartbeat(const WorkerHeartbeat& h) {
  return DumpJson(nlohmann::json{{"name", h.name},
                                 {"host", h.host},
                                 {"pid", h.pid},
                                 {"version", h.machine.version},
                                 {"cpu_model", h.machine.cpu_model},
                                 {"isa", h.machine.isa},
                                 {"threads", h.machine.threads},
                                 {"jobs", h.jobs},
                                 {"busy_s", h.busy_s},
                                 {"builds_plans", h.builds_plans}});
}

StatusOr<WorkerHeartbeat> ParseHeartbeat(const std::string& text) {
  auto bad = [] { return InvalidArgumentError("a worker heartbeat is not the expected JSON"); };
  StatusOr<nlohmann::json> parsed = ParseUntrustedJson(text, "a worker heartbeat");
  if (!parsed.ok() || !parsed->is_object()) return bad();
  const nlohmann::json& j = *parsed;
  WorkerHeartbeat h;
  try {
    h.name = j.at("name").get<std::string>();
    h.host = j.at("host").get<std::string>();
    h.pid = j.at("pid").get<int64_t>();
    h.machine.version = j.at("version").get<std::string>();
    h.machine.cpu_model = j.at("cpu_model").get<std::string>();
    h.machine.isa = j.at("isa").get<std::string>();
    h.machine.threads = j.at("threads").get<int>();
    h.jobs = j.at("jobs").get<int64_t>();
    h.busy_s = j.at("busy_s").get<double>();
    h.builds_plans = j.value("builds_plans", false);  // absent: a worker of before plans
  } catch (const std::exception&) {
    return bad();
  }
  return h;
}

bool ParseFailureKind(const std::string& name, FailureKind* kind) {
  static const std::map<std::string, FailureKind> kKinds = {
      {"none", FailureKind::kNone},
      {"timeout", FailureKind::kTimeout},
      {"crash", FailureKind::kCrash},
      {"exit", FailureKind::kExit},
      {"unparsable", FailureKind::kUnparsable},
      {"build", FailureKind::kBuild},
      {"connection", FailureKind::kConnection}};
  auto it = kKinds.find(name);
  if (it == kKinds.end()) return false;
  *kind = it->second;
  return true;
}

}  // namespace qtune::measure
