// Writes the seed corpora of the JSON fuzz targets (state_log, checkpoint, redis) with the
// code's own writers, plus the hostile cases of issue 24: deeply nested JSON (10 000
// levels; 100 000 crashed qtune) and bytes that are not UTF-8. Run from the repository
// root after changing it:
//   build/tests/fuzz/qtune_fuzz_make_json_corpus tests/fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/sha256.h"
#include "fuzz/json_fuzz_util.h"
#include "fuzz/state_log_fuzz_header.h"
#include "ir/builder.h"
#include "measure/redis_protocol.h"
#include "measure/state_log.h"
#include "quant/plan_json.h"
#include "tune/checkpoint.h"

namespace qtune::fuzz {
namespace {

namespace fs = std::filesystem;

// 10 000 levels: far past the 64 qtune reads, small enough to mutate quickly.
const std::string kDeep = std::string(10000, '[') + std::string(10000, ']');
const std::string kLatin1 = "caf\xe9: no such d\xe9vice";

void Write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  std::printf("wrote %s (%zu bytes)\n", path.c_str(), bytes.size());
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A checksummed state-log line around `json_text`, as StateLog writes them.
std::string Signed(const std::string& json_text) { return ResignStateLogLines(json_text) + "\n"; }

int StateLogs(const fs::path& dir) {
  const fs::path path = dir / "log.jsonl";
  fs::create_directories(dir);
  fs::remove(path);
  {
    std::vector<std::string> warnings;
    auto log = measure::StateLog::Open(path.string(), FuzzStateHeader(), {}, &warnings);
    if (!log.ok()) {
      std::fprintf(stderr, "%s\n", log.status().ToString().c_str());
      return 1;
    }
    measure::MeasurementRecord ok;
    ok.key = "0123456789abcdef:fp32";
    ok.pattern = "baseline";
    ok.scheme = "0";
    ok.ok = true;
    ok.candidate_ms = {1.25, 1.5, 1.0};
    ok.reference_ms = {2.0, 2.5, 2.25};
    ok.timestamp = "2026-12-01T12:00:00Z";
    measure::MeasurementRecord failed = ok;
    failed.key = "fedcba9876543210:fp32";
    failed.pattern = "3f2a";
    failed.scheme = "0110";
    failed.ok = false;
    failed.candidate_ms.clear();
    failed.reference_ms.clear();
    failed.error_kind = "exit:7";
    failed.error_detail =
        "`sh bench.sh candidate.onnx`: exit code 7; output ends with:\n" + kLatin1;
    failed.attempts = 2;
    if (!(*log)->Append(ok).ok() || !(*log)->Append(failed).ok()) return 1;
  }
  const std::string log = Slurp(path);
  std::printf("wrote %s (%zu bytes)\n", path.c_str(), log.size());
  const std::string header = log.substr(0, log.find('\n') + 1);
  Write(dir / "deep-record.jsonl", header + Signed(kDeep) + log.substr(header.size()));
  Write(dir / "deep-header.jsonl", Signed("{\"type\": \"header\", \"x\": " + kDeep + "}"));
  // The record's JSON with a raw 0xE9 inside a string (invalid UTF-8, validly signed).
  std::string latin1 =
      "{\"type\": \"measurement\", \"key\": \"k\", \"error_detail\": \"" + kLatin1 + "\"}";
  Write(dir / "invalid-utf8.jsonl", header + Signed(latin1) + log.substr(header.size()));
  Write(dir / "junk-tail.jsonl", log + "\x01\xff junk \xe9\n{]\n" + std::string(300, 'z') + "\n");
  return 0;
}

int Checkpoints(const fs::path& dir) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 4});
  ir::Value* w = b.Initializer("w", Tensor::FromVector<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  b.Output(b.Op("MatMul", {x, w}));
  auto graph = b.Build();
  tune::CheckpointManifest manifest = tune::NewCheckpointManifest();
  manifest.created_utc = "2026-12-01T12:00:00Z";
  manifest.weights = tune::FingerprintWeights(*graph);
  manifest.tuning = {
      {"chosen", "int8"}, {"threads", 2}, {"latency_ms", 1.25}, {"plan", "plan.json"}};
  Write(dir / "manifest.json", tune::ManifestToJson(manifest).dump(2));
  quant::QuantPlan plan;
  quant::QuantSite site;
  site.value = "x";
  site.consumers = {{"MatMul_0", 0}};
  site.role = "MatMul input";
  plan.sites.push_back(site);
  quant::QuantSite weight;
  weight.kind = quant::QuantSite::Kind::kWeight;
  weight.value = "w";
  weight.consumers = {{"MatMul_0", 1}};
  plan.sites.push_back(weight);
  plan.quantized_nodes = {"MatMul_0"};
  Write(dir / "plan.json", quant::PlanToJsonText(plan));
  Write(dir / "deep.json", kDeep);
  std::string text = tune::ManifestToJson(manifest).dump();
  Write(dir / "deep-tuning.json", text.substr(0, text.find("\"tuning\":") + 9) + kDeep + "}");
  // A raw 0xE9 inside a string: not UTF-8, which the JSON parser refuses.
  manifest.qtune_version = "@LATIN1@";
  text = tune::ManifestToJson(manifest).dump(2);
  Write(dir / "invalid-utf8.json", text.replace(text.find("@LATIN1@"), 8, kLatin1));
  return 0;
}

std::string Fields(const measure::StreamFields& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '\0';
    out += name + '\0' + value;
  }
  return out;
}

int Redis(const fs::path& dir) {
  auto keys = measure::RedisKeys::ForQueue("fuzz");
  if (!keys.ok()) return 1;
  measure::Job job;
  job.id = "t-1";
  job.reply = keys->results("t");
  job.candidate_sha256 = Sha256Hex("candidate");
  job.reference_sha256 = Sha256Hex("reference");
  job.rounds = 3;
  job.iters = 10;
  job.warmup = 2;
  job.timeout_s = 30;
  job.seed = 7;
  job.shapes = {{"input", {1, 1, 28, 28}}, {"mask", {1, 16}}};
  job.machine = "Intel(R) Xeon(R) | avx2 fma | threads 1 | qtune 0.1.0";
  measure::StreamFields fields = measure::EncodeJob(job);
  Write(dir / "job.fields", Fields(fields));
  for (auto& [name, value] : fields) {
    if (name == "shapes") value = "{\"input\": " + kDeep + "}";
  }
  Write(dir / "job-deep-shapes.fields", Fields(fields));
  measure::JobResult ok{"t-1", "w1", job.machine, {}};
  ok.measurement.candidate_ms = {1.5, 1.25, 1.75};
  ok.measurement.reference_ms = {2.0, 2.5, 2.25};
  Write(dir / "result.fields", Fields(measure::EncodeResult(ok)));
  measure::JobResult failed{"t-2", "w1", job.machine, {}};
  failed.measurement.failure = measure::FailureKind::kExit;
  failed.measurement.exit_code = 7;
  failed.measurement.detail = kLatin1;
  Write(dir / "result-failed-latin1.fields", Fields(measure::EncodeResult(failed)));
  fields = measure::EncodeResult(ok);
  for (auto& [name, value] : fields) {
    if (name == "candidate_ms") value = kDeep;
  }
  Write(dir / "result-deep.fields", Fields(fields));
  measure::WorkerHeartbeat heartbeat;
  heartbeat.name = "w1";
  heartbeat.host = "host";
  heartbeat.pid = 42;
  heartbeat.machine.cpu_model = "Intel(R) Xeon(R)";
  heartbeat.machine.isa = "avx2 fma";
  heartbeat.jobs = 3;
  heartbeat.busy_s = 1.5;
  Write(dir / "heartbeat.json", measure::EncodeHeartbeat(heartbeat));
  return 0;
}

}  // namespace
}  // namespace qtune::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  int failed = qtune::fuzz::StateLogs(root / "state_log");
  failed += qtune::fuzz::Checkpoints(root / "checkpoint");
  failed += qtune::fuzz::Redis(root / "redis");
  return failed == 0 ? 0 : 1;
}
