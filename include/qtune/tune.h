// qtune/tune.h: pick the fastest configuration of qtune's engine that passes an accuracy
// check, and save it as a small checkpoint (docs/tune.md). What `qtune tune MODEL --calib
// DATA -o MODEL.qtc --json` does.
//
//   qtune::TuneOptions options;
//   options.calib = {"calib.npy"};
//   options.candidates = {"fp32", "int8"};
//   options.threads = {1, 4};
//   auto result = qtune::Tune("model.onnx", "model.qtc", options);
//   // then qtune::LoadTuned("model.onnx", "model.qtc") (qtune/checkpoint.h) deploys it.
//
// Contract: each candidate (fp32, bf16, int8, int8-fallback, autotuned) at each thread
// count is built, checked against fp32 on the first calibration samples (output SQNR >=
// min_sqnr_db) and measured; failing rows are reported, not errors. Writes the checkpoint
// `checkpoint_path` and `<checkpoint_path>.sha256` (no weights: only their digests). Measures
// in a child qtune-measure process: see qtune/autotune.h for how it is found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "status.h"
#include "tensor.h"

namespace qtune {

struct TuneOptions {
  std::vector<std::string> calib;                             // as QuantizeOptions::calib
  std::vector<std::pair<std::string, Tensor>> calib_tensors;  // as QuantizeOptions::calib_tensors
  std::string preprocess;
  std::string recipe = "int8";          // of the int8 candidates
  std::vector<std::string> candidates;  // empty: all of fp32, bf16, int8, int8-fallback, autotuned
  std::vector<int> threads = {1};
  std::string strategy = "min-latency";  // | max-throughput | first-wins | latency-budget=MS
  double min_sqnr_db = 20;
  int64_t max_calib_samples = 0;  // 0: every sample
  int iters = 10;                 // timed runs per model per round
  int rounds = 3;                 // candidate/fp32 alternations
  std::string autotune_dir;       // an Autotune work dir: enables the "autotuned" candidate
  std::string qtune_binary;       // see qtune/autotune.h
  // Candidate files and the state log (docs/tune.md, "Resuming"); empty: a temporary
  // folder. The same folder again takes the rows measured before from the log.
  std::string work_dir;
  bool force_new = false;  // start over when the log is from other measuring options
  bool show_progress = false;
};

// One candidate at one thread count.
struct TuneRow {
  std::string candidate;
  int threads = 1;
  std::string status;             // "pass", "fail" or "skip"
  std::string why;                // fail/skip: the reason; pass: notes
  std::optional<double> sqnr_db;  // output SQNR vs fp32; +inf when exact
  double latency_ms = 0;          // passed rows
  double fp32_latency_ms = 0;     // fp32 at the same threads, in the same rounds
  bool replayed = false;          // latencies from work_dir's state log, not measured now
  bool chosen = false;
};

struct TuneResult {
  std::string checkpoint_path;
  std::string candidate;  // the chosen row's
  int threads = 1;
  std::vector<TuneRow> rows;
  std::string json;  // what `qtune tune --json` prints
};

StatusOr<TuneResult> Tune(const std::string& model_path, const std::string& checkpoint_path,
                          const TuneOptions& options);

}  // namespace qtune
