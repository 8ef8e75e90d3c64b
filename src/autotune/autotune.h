// `qtune autotune` as a library call: calibrate once, search the Q/DQ placement by
// measuring, write the best QDQ model (docs/autotune.md).
//
//   load + clean (passes) -> rule-based plan with calibrated ranges and guards (the
//   `qtune quantize` flow) -> regions, patterns, insertion points -> calibration of the
//   candidate tensors the rules did not quantize -> state log (replayed on a warm restart)
//   -> baselines: fp32 and the rule-based placement, measured against each other -> the
//   search starts from the faster one -> final model, measured against both baselines.
//
// Work directory (created when missing):
//   state.jsonl       the state log (state_log.h)
//   models/           fp32.onnx, rule.onnx, and each incumbent by placement hash
//   candidates/N/     candidate.onnx of each candidate in flight (removed at the end)
//   best.onnx         the best model so far (replaced atomically at each adoption)
//   plan.json         the final placement's calibrated QuantPlan (quant/plan_json.h)
//   report.json       written at the end (docs/formats/autotune-report.md)
//   logs/             outputs of the command back end
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace qtune::autotune {

// Budget and measurement repeats of a --mode.
struct ModePreset {
  int schemes_per_pattern = 8;
  int rounds = 3;  // candidate/reference alternations per measurement
  int iters = 10;  // timed runs per round (in-process back end)
  int warmup = 3;
};
// "quick", "default", "extensive"; InvalidArgument for another name.
StatusOr<ModePreset> PresetOfMode(const std::string& mode);

struct AutotuneOptions {
  std::string model_path;
  std::string output_path;
  std::string work_dir;
  std::vector<std::string> calib_specs;  // as `qtune quantize --calib`
  std::string preprocess;
  std::string recipe = "int8";
  int64_t max_calib_samples = 0;
  std::string mode = "default";
  // Where the search starts: "auto" (the faster baseline), "rule" or "fp32". Whatever the
  // start, the result is guarded against the faster baseline.
  std::string start = "auto";
  int schemes_per_pattern = 0;  // 0: the mode's
  int threads = 1;
  double min_sqnr_db = 0;  // 0: no accuracy constraint
  int64_t sqnr_samples = 8;
  double timeout_s = 60;
  int retries = 2;
  uint64_t seed = 0;
  std::string benchmark = "inprocess";  // or "command", "redis"
  std::string benchmark_command;        // with {model}
  std::string latency_regex;            // empty: the default
  std::string pattern_cache;            // file; read for seeds, written at the end
  std::string import_qdq;               // a QDQ model whose placement seeds the search
  bool shape_aware = false;
  bool force_new = false;
  bool show_progress = true;
  std::string worker_executable;  // the qtune binary (in-process back end)
  // --benchmark redis: `qtune worker`s reached through Redis (benchmark_redis.h). The URL
  // may hold a password: it is never logged nor written to the state log or report.
  std::string redis_url;
  std::string queue = "default";
  bool allow_mixed_workers = false;
  double worker_wait_s = 10;  // how long to wait for a worker at start
  // Measurements in flight at once (--parallel K). The search proposes the same candidates
  // whatever K is (search.h: generations), so K changes the wall time only. Only the redis
  // back end measures several at once; the others measure one at a time whatever K is. Not
  // a result-changing option: not in the state log's header.
  int parallel = 1;
};

// The report (also written to <work_dir>/report.json). Errors: bad options, data or model
// (named), a state log from another model or other options, a baseline that cannot be
// measured. A failed candidate measurement is not an error: it is in the report.
StatusOr<nlohmann::json> RunAutotune(const AutotuneOptions& options);

}  // namespace qtune::autotune
