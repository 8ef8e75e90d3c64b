#include "tune/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>

#include "core/file_io.h"
#include "core/logging.h"
#include "core/sha256.h"
#include "ir/onnx_io.h"
#include "measure/benchmark_inprocess.h"
#include "measure/benchmark_redis.h"
#include "quant/calibration_data.h"
#include "quant/output_sqnr.h"
#include "quant/plan_json.h"
#include "quant/quantize_model.h"
#include "tune/tune_log.h"
#include "tune/tune_strategy.h"

namespace qtune::tune {
namespace {

namespace fs = std::filesystem;

// A temporary folder removed when it goes out of scope (or a caller-given one, kept).
class WorkDir {
 public:
  static StatusOr<WorkDir> Make(const std::string& given) {
    WorkDir dir;
    if (!given.empty()) {
      std::error_code ec;
      fs::create_directories(given, ec);
      if (ec)
        return InvalidArgumentError(fmt::format("cannot create '{}': {}", given, ec.message()));
      dir.path_ = given;
      return dir;
    }
    ASSIGN_OR_RETURN(TempFolder temp, TempFolder::Create("qtune-tune-"));
    dir.path_ = temp.path();
    dir.owned_.emplace(std::move(temp));
    return dir;
  }
  std::string File(const std::string& name) const { return (fs::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  WorkDir() = default;
  std::string path_;
  std::optional<TempFolder> owned_;  // a folder of our own: removed with the WorkDir
};

std::string CpuBf16Note() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    size_t colon = line.find(':');
    std::string word;
    for (size_t i = colon + 1; i <= line.size(); ++i) {
      if (i == line.size() || line[i] == ' ') {
        if (!word.empty()) flags.insert(word);
        word.clear();
      } else {
        word += line[i];
      }
    }
    break;
  }
  auto has = [&](const char* f) { return flags.count(f) ? "yes" : "no"; };
  return fmt::format("this CPU: avx512_bf16 {}, amx_bf16 {}", has("avx512_bf16"), has("amx_bf16"));
}

// The bf16 note of rows measured by workers: the bf16 ISA in their machine fingerprint
// (measure::MachineInfo::Fingerprint: "CPU | ISA flags | threads N | qtune V").
std::string WorkersBf16Note(const std::string& machine) {
  std::set<std::string> words;
  std::string word;
  for (char c : machine + " ") {
    if (c == ' ' || c == '|') {
      if (!word.empty()) words.insert(word);
      word.clear();
    } else {
      word += c;
    }
  }
  auto has = [&](const char* f) { return words.count(f) ? "yes" : "no"; };
  return fmt::format("workers' CPU: avx512_bf16 {}, amx_bf16 {}", has("avx512_bf16"),
                     has("amx_bf16"));
}

Status ValidateOptions(const TuneOptions& options) {
  if (options.candidates.empty()) return InvalidArgumentError("--candidates: none given");
  std::set<std::string> seen;
  for (const std::string& c : options.candidates) {
    const auto& all = AllCandidates();
    if (std::find(all.begin(), all.end(), c) == all.end()) {
      return InvalidArgumentError(
          fmt::format("--candidates: '{}' is unknown; choose from fp32, bf16, int8, int8-fallback, "
                      "autotuned",
                      c));
    }
    if (!seen.insert(c).second) {
      return InvalidArgumentError(fmt::format("--candidates: '{}' is listed twice", c));
    }
  }
  if (options.threads.empty()) return InvalidArgumentError("--threads: none given");
  for (int t : options.threads) {
    if (t < 1 || t > 256) {
      return InvalidArgumentError(fmt::format("--threads: {} is not in [1, 256]", t));
    }
  }
  if (options.check_samples < 1) return InvalidArgumentError("check samples must be >= 1");
  if (!std::isfinite(options.min_sqnr_db)) return InvalidArgumentError("--min-sqnr must be finite");
  if (options.worker_executable.empty()) {
    return InvalidArgumentError("tune: no worker executable (the qtune binary) to measure in");
  }
  if (options.benchmark != "inprocess" && options.benchmark != "redis") {
    return InvalidArgumentError("--benchmark must be inprocess or redis, not '" +
                                options.benchmark + "'");
  }
  if (options.benchmark == "redis" && options.redis_url.empty()) {
    return InvalidArgumentError("--benchmark redis needs --redis redis://HOST:PORT/DB");
  }
  if (options.benchmark != "redis" && !options.redis_url.empty()) {
    return InvalidArgumentError("--redis needs --benchmark redis");
  }
  return Status::Ok();
}

measure::RedisBenchmarkOptions RedisOptions(const TuneOptions& options, int threads,
                                            const InputSizes& sizes) {
  measure::RedisBenchmarkOptions b;
  b.url = options.redis_url;
  b.queue = options.queue;
  b.warmup = options.warmup;
  b.iters = options.iters;
  b.input_sizes = sizes;
  b.timeout_s = options.timeout_s;
  b.worker_wait_s = options.worker_wait_s;
  b.threads = threads;  // rows of N threads are measured by workers of N threads
  return b;
}

// The measuring back end of the rows with `threads` threads.
StatusOr<std::unique_ptr<measure::Benchmark>> MakeRowBenchmark(const TuneOptions& options,
                                                               int threads,
                                                               const InputSizes& sizes) {
  if (options.benchmark == "redis") {
    ASSIGN_OR_RETURN(auto bench,
                     measure::RedisBenchmark::Create(RedisOptions(options, threads, sizes)));
    return std::unique_ptr<measure::Benchmark>(std::move(bench));
  }
  measure::InProcessBenchmarkOptions b;
  b.worker_executable = options.worker_executable;
  b.threads = threads;
  b.warmup = options.warmup;
  b.iters = options.iters;
  b.input_sizes = sizes;
  b.timeout_s = options.timeout_s;
  ASSIGN_OR_RETURN(auto bench, measure::InProcessBenchmark::Create(b));
  return std::unique_ptr<measure::Benchmark>(std::move(bench));
}

// The plan of one quantized candidate; the note says what it did (e.g. the fallback).
struct CandidatePlan {
  quant::QuantPlan plan;
  std::string note;
};

StatusOr<CandidatePlan> MakePlan(const ir::Graph& model, const std::string& candidate,
                                 const TuneOptions& options) {
  CandidatePlan out;
  if (candidate == "autotuned") {
    const std::string path = (fs::path(options.autotune_dir) / "plan.json").string();
    ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    ASSIGN_OR_RETURN(out.plan, quant::ParsePlanJson(text, "'" + path + "'"));
    out.note = "from " + path;
    return out;
  }
  quant::QuantizeModelOptions q;
  q.recipe = options.recipe;
  q.calib_specs = options.calib_specs;
  q.preprocess = options.preprocess;
  q.max_calib_samples = options.max_calib_samples;
  q.threads = options.threads.front();
  q.show_progress = options.show_progress;
  q.export_model = false;
  if (candidate == "int8-fallback") {
    q.fallback.min_sqnr_db = options.min_sqnr_db;
    q.fallback.samples = options.check_samples;
  }
  ASSIGN_OR_RETURN(quant::QuantizeModelResult r, quant::QuantizeModel(model, q));
  out.plan = std::move(r.plan);
  if (r.fallback.has_value()) {
    out.note = fmt::format("{} layer(s) kept in float", r.fallback->fallen_back.size());
  }
  return out;
}

void FailRows(std::vector<TuneRow>& rows, size_t first, TuneRow::Status status,
              const std::string& why) {
  for (size_t i = first; i < rows.size(); ++i) {
    rows[i].status = status;
    rows[i].why = why;
  }
}

StatusOr<InputSizes> MeasuredSizes(const ir::Graph& graph, quant::CalibrationSource& source,
                                   int64_t batch_size) {
  int64_t batch = quant::FixedBatchSize(graph).value_or(batch_size);
  if (source.num_samples() < batch) {
    return InvalidArgumentError(
        fmt::format("{} holds fewer than one batch ({} samples)", source.Describe(), batch));
  }
  ASSIGN_OR_RETURN(auto tensors, source.Batch(0, batch));
  InputSizes sizes;
  for (const auto& [name, t] : tensors) sizes[name] = t.sizes();
  return sizes;
}

// Records a candidate's accuracy check in rows [first, rows.size()); false (the rows
// failed, saying why) when it cannot be scored or misses `min_sqnr_db`.
bool CheckAccuracy(const StatusOr<quant::OutputSqnr>& sqnr, std::vector<TuneRow>& rows,
                   size_t first, double min_sqnr_db) {
  if (!sqnr.ok()) {
    FailRows(rows, first, TuneRow::Status::kFailed, "check: " + sqnr.status().message());
    return false;
  }
  for (size_t i = first; i < rows.size(); ++i) rows[i].sqnr_db = sqnr->db;
  if (!sqnr->non_finite_output.empty()) {
    FailRows(rows, first, TuneRow::Status::kFailed,
             fmt::format("NaN or inf in output '{}'", sqnr->non_finite_output));
    return false;
  }
  if (!(sqnr->db >= min_sqnr_db)) {
    FailRows(rows, first, TuneRow::Status::kFailed,
             fmt::format("SQNR {:.1f} dB < {:.1f} dB", sqnr->db, min_sqnr_db));
    return false;
  }
  return true;
}

// One candidate file of the rows MeasureRows measures: `bf16` is the fp32 file computed in
// bfloat16.
struct RowCandidate {
  std::string path;
  std::string sha256;
  bool bf16 = false;
};

// Measures the passed rows in [first, rows.size()) of one candidate against the fp32 file
// (`fp32_sha256` its content), or takes their measurement from `log` when an earlier run
// on the same work dir measured the same files on the same machine.
void MeasureRows(std::vector<TuneRow>& rows, size_t first, const RowCandidate& candidate,
                 const std::string& fp32_path, const std::string& fp32_sha256,
                 const TuneOptions& options, const InputSizes& sizes, TuneLog& log,
                 std::map<int, std::unique_ptr<measure::Benchmark>>& benchmarks) {
  const bool against_fp32 = candidate.path != fp32_path || candidate.bf16;
  for (size_t i = first; i < rows.size(); ++i) {
    TuneRow& row = rows[i];
    auto& bench = benchmarks[row.threads];
    if (bench == nullptr) {
      auto created = MakeRowBenchmark(options, row.threads, sizes);
      if (!created.ok()) {
        row.status = TuneRow::Status::kFailed;
        row.why = "measuring: " + created.status().message();
        continue;
      }
      bench = std::move(created).value();
    }
    const RowMeasurementKey key{candidate.sha256, candidate.bf16, against_fp32 ? fp32_sha256 : "",
                                measure::MeasuringMachine(*bench, row.threads)};
    std::vector<double> candidate_ms, reference_ms;
    if (const measure::MeasurementRecord* logged = log.Find(key)) {
      candidate_ms = logged->candidate_ms;
      reference_ms = logged->reference_ms;
      row.replayed = true;
    } else {
      measure::MeasureRequest request;
      request.candidate_path = candidate.path;
      request.candidate_bf16 = candidate.bf16;
      request.reference_path = against_fp32 ? fp32_path : "";
      request.rounds = options.rounds;
      measure::Measurement m = bench->Measure(request);
      log.Append(key, row, m);
      if (!m.ok()) {
        row.status = TuneRow::Status::kFailed;
        row.why = fmt::format("measuring failed ({}): {}",
                              measure::FailureKindName(m.failure, m.exit_code), m.detail);
        continue;
      }
      candidate_ms = std::move(m.candidate_ms);
      reference_ms = std::move(m.reference_ms);
    }
    row.latency_ms = measure::Median(candidate_ms);
    row.fp32_latency_ms = reference_ms.empty() ? row.latency_ms : measure::Median(reference_ms);
    row.throughput = row.latency_ms > 0 ? 1000.0 / (row.latency_ms * row.threads) : 0;
    if (options.show_progress) {
      QTUNE_LOG_INFO("tune: {} threads {}: {:.3f} ms (fp32 {:.3f} ms){}", row.candidate,
                     row.threads, row.latency_ms, row.fp32_latency_ms,
                     row.replayed ? ", measured before" : "");
    }
  }
}

}  // namespace

StatusOr<TuneResult> Tune(const ir::Graph& model, const TuneOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  ASSIGN_OR_RETURN(TuneStrategy strategy, ParseTuneStrategy(options.strategy));
  TuneResult result;
  result.strategy = options.strategy;
  result.recipe = options.recipe;
  result.min_sqnr_db = options.min_sqnr_db;
  result.weights = FingerprintWeights(model);
  result.cpu_note = CpuBf16Note();
  if (options.benchmark == "redis") {
    // Redis and a worker for every thread count must be there before anything is built:
    // a missing one is an error within seconds.
    for (int t : options.threads) {
      ASSIGN_OR_RETURN(auto bench, measure::RedisBenchmark::Create(RedisOptions(options, t, {})));
      if (t == options.threads.front())
        result.cpu_note = WorkersBf16Note(bench->required_machine());
    }
  }

  ASSIGN_OR_RETURN(auto float_graph, BuildTunedGraph(model, nullptr));
  if (options.calib_specs.empty()) {
    return InvalidArgumentError(
        "no calibration data: pass --calib FILE.npy|FILE.npz|DIR (a few hundred real samples)");
  }
  ASSIGN_OR_RETURN(auto source, quant::OpenCalibrationData(options.calib_specs, options.preprocess,
                                                           *float_graph));
  ASSIGN_OR_RETURN(result.input_sizes, MeasuredSizes(*float_graph, *source, options.batch_size));
  ASSIGN_OR_RETURN(auto comparer,
                   quant::OutputComparer::Create(*float_graph, *source, options.check_samples,
                                                 options.threads.front()));
  ASSIGN_OR_RETURN(WorkDir work, WorkDir::Make(options.work_dir));
  const std::string fp32_path = work.File("fp32.onnx");
  RETURN_IF_ERROR(ir::SaveModel(*float_graph, fp32_path));
  ASSIGN_OR_RETURN(const std::string fp32_sha256, Sha256File(fp32_path));
  ASSIGN_OR_RETURN(auto log, TuneLog::Open(work.path(), fp32_sha256, options, result.input_sizes));

  std::map<int, std::unique_ptr<measure::Benchmark>> benchmarks;
  for (const std::string& candidate : options.candidates) {
    const size_t first = result.rows.size();
    for (int t : options.threads) {
      TuneRow row;
      row.candidate = candidate;
      row.threads = t;
      result.rows.push_back(row);
    }
    if (candidate == "autotuned" && options.autotune_dir.empty()) {
      FailRows(result.rows, first, TuneRow::Status::kSkipped,
               "no --autotune-dir given (run `qtune autotune` first)");
      continue;
    }
    if (candidate == "autotuned" && !fs::exists(fs::path(options.autotune_dir) / "plan.json")) {
      FailRows(result.rows, first, TuneRow::Status::kSkipped,
               fmt::format("'{}' holds no plan.json", options.autotune_dir));
      continue;
    }
    RowCandidate row_candidate{fp32_path, fp32_sha256, candidate == "bf16"};
    std::string note;
    if (candidate == "fp32") {
      for (size_t i = first; i < result.rows.size(); ++i) {
        result.rows[i].sqnr_db = std::numeric_limits<double>::infinity();
      }
    } else if (candidate == "bf16") {
      // The fp32 model itself, its Conv/MatMul/Gemm computed in bfloat16: nothing to build.
      if (!CheckAccuracy(comparer->Compare(*float_graph, /*bf16=*/true), result.rows, first,
                         options.min_sqnr_db)) {
        continue;
      }
      note = result.cpu_note;
    } else {
      if (options.show_progress) QTUNE_LOG_INFO("tune: building {}", candidate);
      auto plan = MakePlan(model, candidate, options);
      if (!plan.ok()) {
        FailRows(result.rows, first, TuneRow::Status::kFailed, "build: " + plan.status().message());
        continue;
      }
      auto built = BuildTunedGraph(model, &plan->plan);
      if (!built.ok()) {
        FailRows(result.rows, first, TuneRow::Status::kFailed,
                 "export: " + built.status().message());
        continue;
      }
      if (!CheckAccuracy(comparer->Compare(**built), result.rows, first, options.min_sqnr_db)) {
        continue;
      }
      row_candidate.path = work.File(candidate + ".onnx");
      Status saved = ir::SaveModel(**built, row_candidate.path);
      auto sha256 = saved.ok() ? Sha256File(row_candidate.path) : StatusOr<std::string>(saved);
      if (!sha256.ok()) {
        FailRows(result.rows, first, TuneRow::Status::kFailed,
                 "save: " + sha256.status().message());
        continue;
      }
      row_candidate.sha256 = *sha256;
      note = plan->note;
      result.plans[candidate] = std::move(plan->plan);
    }
    FailRows(result.rows, first, TuneRow::Status::kPassed, note);
    MeasureRows(result.rows, first, row_candidate, fp32_path, fp32_sha256, options,
                result.input_sizes, *log, benchmarks);
  }
  const auto replayed = std::count_if(result.rows.begin(), result.rows.end(),
                                      [](const TuneRow& row) { return row.replayed; });
  if (replayed > 0 && options.show_progress) {
    QTUNE_LOG_INFO("tune: warm restart: {} row(s) measured by an earlier run, from {}", replayed,
                   log->path());
  }

  std::string note;
  size_t chosen = PickTuneRow(result.rows, strategy, &note);
  if (chosen == result.rows.size()) {
    // Nothing passed: fp32 at the first thread count, measured or not.
    chosen = result.rows.size();
    for (size_t i = 0; i < result.rows.size(); ++i) {
      if (result.rows[i].candidate == "fp32") {
        chosen = i;
        break;
      }
    }
    if (chosen == result.rows.size()) {
      TuneRow row;
      row.candidate = "fp32";
      row.threads = options.threads.front();
      row.sqnr_db = std::numeric_limits<double>::infinity();
      row.why = "not requested; the result when no candidate passes";
      result.rows.push_back(row);
    }
    note = "no candidate passed: fp32";
  }
  result.chosen = chosen;
  result.rows[chosen].chosen = true;
  result.strategy_note = note;
  return result;
}

}  // namespace qtune::tune
