// `qtune tune`: picks the fastest deployment configuration of qtune's engine that passes an
// accuracy check, and saves it as a small, weight-free checkpoint (docs/tune.md).
//
//   candidates (fp32, bf16, int8, int8-fallback, autotuned) x thread counts = rows
//   -> each row built (QDQ export of its plan on the cleaned float graph)
//   -> checked against fp32 on the first check_samples calibration samples (output SQNR >=
//      min_sqnr_db, no NaN/inf); failing rows are reported and not measured
//   -> measured interleaved with fp32 at the same threads, through measure::Benchmark:
//      in process (this machine) or by `qtune worker`s over Redis (--benchmark redis)
//   -> the strategy picks one row; fp32 when nothing else passes.
//
// Deploying in three lines:
//   auto model = ir::LoadModel("m.onnx");
//   auto session = tune::LoadTuned(**model, "m.qtc", {});
//   auto outputs = (*session)->Run(inputs);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/quant_types.h"
#include "runtime/session.h"
#include "tune/weight_fingerprint.h"

namespace qtune::tune {

using InputSizes = std::map<std::string, std::vector<int64_t>>;

// The candidate names, in the default order.
inline const std::vector<std::string>& AllCandidates() {
  static const std::vector<std::string> kAll = {"fp32", "bf16", "int8", "int8-fallback",
                                                "autotuned"};
  return kAll;
}

struct TuneOptions {
  std::vector<std::string> calib_specs;  // calibration_data.h specs
  std::string preprocess;                // image preprocess spec (image folders)
  int64_t max_calib_samples = 0;         // 0: all (int8 calibration)
  std::string recipe = "int8";           // quantization recipe of the int8 candidates
  std::vector<std::string> candidates = AllCandidates();
  std::vector<int> threads = {1};
  // min-latency | max-throughput | first-wins | latency-budget=MS
  std::string strategy = "min-latency";
  double min_sqnr_db = 20;
  int64_t check_samples = 8;      // first calibration samples of the accuracy check
  int64_t batch_size = 1;         // measured batch for a free batch axis
  std::string autotune_dir;       // holds plan.json for the "autotuned" candidate
  std::string worker_executable;  // the qtune binary (measure-worker)
  // The candidate model files and the state log (state.jsonl, tune_log.h); empty: a
  // temporary folder. A rerun on the same folder takes the rows measured before from the
  // log instead of measuring them again; a log of another model or other measuring
  // options is refused unless force_new, which keeps it beside a new one.
  std::string work_dir;
  bool force_new = false;
  int warmup = 3;          // per model, before the first round
  int iters = 10;          // timed runs per model per round
  int rounds = 3;          // candidate/fp32 alternations
  double timeout_s = 120;  // per measurement
  bool show_progress = false;
  // Where rows are measured: "inprocess" (this machine) or "redis": `qtune worker`s
  // reached at redis_url on `queue` (docs/workers.md), each row by workers that measure
  // with the row's thread count (qtune worker --threads N); Tune() fails within
  // worker_wait_s when Redis or such a worker is missing.
  std::string benchmark = "inprocess";
  std::string redis_url;  // may hold a password: never logged nor saved
  std::string queue = "default";
  double worker_wait_s = 10;
};

// One candidate at one thread count.
struct TuneRow {
  enum class Status { kPassed, kFailed, kSkipped };
  std::string candidate;
  int threads = 1;
  Status status = Status::kSkipped;
  std::string why;                // failed/skipped: the reason; passed: notes (may be empty)
  std::optional<double> sqnr_db;  // +inf for fp32 and exact matches
  double latency_ms = 0;          // median of the per-round medians (passed rows)
  double fp32_latency_ms = 0;     // fp32 at the same threads, interleaved with this row
  double throughput = 0;          // inferences/s per core = 1000 / (latency_ms * threads)
  bool replayed = false;          // latencies from the work dir's state log, not measured now
  bool chosen = false;
};
const char* TuneRowStatusName(TuneRow::Status status);  // "pass", "fail", "skip"

struct TuneResult {
  std::vector<TuneRow> rows;  // candidate order, then thread order
  size_t chosen = 0;          // index into rows
  std::string strategy;
  std::string strategy_note;  // e.g. "no passing row within 2 ms: min-latency"
  std::string recipe;
  double min_sqnr_db = 0;
  InputSizes input_sizes;                         // the measured sizes; warm-up sizes on load
  std::map<std::string, quant::QuantPlan> plans;  // by candidate (quantized ones that built)
  WeightFingerprint weights;                      // of the model as given to Tune
  std::string cpu_note;  // bf16 ISA of this CPU, or the workers' machine (redis)

  const TuneRow& chosen_row() const { return rows[chosen]; }
};

// Tunes `model` (as loaded, before any pass). Errors: bad options (unknown candidate or
// strategy, no threads, no calibration data), a calibration source that does not fit,
// fp32 itself failing to run. Candidate failures are rows, not errors.
StatusOr<TuneResult> Tune(const ir::Graph& model, const TuneOptions& options);

// Saves `result` as a checkpoint (checkpoint.h): the manifest's tuning block holds the
// chosen row, the table and the settings; plan.json the chosen plan when it is quantized.
// No weights, no samples.
Status SaveTuned(const std::string& path, const TuneResult& result);

struct LoadTunedOptions {
  bool verify = true;                  // check <checkpoint>.sha256 first (--no-verify)
  bool allow_weight_mismatch = false;  // rebuild from different weights, with a warning
  std::string cache_dir;               // LoadCheckpointOptions::cache_dir
  int warmup_runs = 2;                 // runs on zeros of the stored input sizes
  // The session's thread policy (runtime/thread_budget.h) for the stored thread count.
  runtime::ThreadPolicy thread_policy = runtime::ThreadPolicy::kFixed;
};

struct TunedSession {
  std::unique_ptr<runtime::Session> session;
  std::string candidate;
  int threads = 1;
  InputSizes input_sizes;
  bool reused_cache = false;
  std::string weight_warning;  // set when the weights differ and that was allowed
  nlohmann::json tuning;       // the manifest's tuning block
};

// Loads `checkpoint` for `model` (the caller's weights): verifies the hash file, reads the
// manifest, checks `model`'s weights against the fingerprint (a mismatch is
// InvalidArgument naming the first differing initializer, unless allowed), then cleans a
// copy of `model` (passes::RunPipeline), exports the stored plan onto it (weight scales
// from `model`'s weights), creates the Session with the stored threads, compiles it for
// the stored input sizes and warms it up. Checkpoint errors are DataLoss (damaged,
// unverified), Unimplemented (newer format).
StatusOr<TunedSession> LoadTunedSession(const ir::Graph& model, const std::string& checkpoint,
                                        const LoadTunedOptions& options);
StatusOr<std::unique_ptr<runtime::Session>> LoadTuned(const ir::Graph& model,
                                                      const std::string& checkpoint,
                                                      const LoadTunedOptions& options);

// Builds the deployable graph of a plan: a cleaned copy of `model` with `plan` exported
// (nullptr: fp32). What LoadTuned runs; tests compare against it.
StatusOr<std::unique_ptr<ir::Graph>> BuildTunedGraph(const ir::Graph& model,
                                                     const quant::QuantPlan* plan);

// The table as text (one row per line, chosen row marked "*") and as JSON.
std::string FormatTuneTable(const TuneResult& result);
nlohmann::json TuneTableToJson(const TuneResult& result);
// What `qtune tune --json` prints (and the Python module returns): the model and checkpoint
// paths, the chosen candidate and threads, the strategy, the input sizes and the table.
nlohmann::json TuneResultToJson(const TuneResult& result, const std::string& model_path,
                                const std::string& checkpoint_path);

}  // namespace qtune::tune
