// qtune::Tune (include/qtune/tune.h) over tune::Tune and tune::SaveTuned.
#include "qtune/tune.h"

#include "api/calib_tensors.h"
#include "core/json_limits.h"
#include "ir/onnx_io.h"
#include "measure/measure_executable.h"
#include "tune/tune.h"

namespace qtune {

StatusOr<TuneResult> Tune(const std::string& model_path, const std::string& checkpoint_path,
                          const TuneOptions& options) {
  tune::TuneOptions engine;
  ASSIGN_OR_RETURN(
      api_internal::TemporaryCalib calib,
      api_internal::TemporaryCalibSpecs(options.calib, options.calib_tensors, "qtune::Tune"));
  engine.calib_specs = calib.specs;
  engine.preprocess = options.preprocess;
  engine.recipe = options.recipe;
  if (!options.candidates.empty()) engine.candidates = options.candidates;
  engine.threads = options.threads;
  engine.strategy = options.strategy;
  engine.min_sqnr_db = options.min_sqnr_db;
  engine.max_calib_samples = options.max_calib_samples;
  engine.iters = options.iters;
  engine.rounds = options.rounds;
  engine.autotune_dir = options.autotune_dir;
  engine.work_dir = options.work_dir;
  engine.force_new = options.force_new;
  engine.show_progress = options.show_progress;
  ASSIGN_OR_RETURN(engine.worker_executable, measure::FindMeasureExecutable(options.qtune_binary));
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> model, ir::LoadModel(model_path));
  ASSIGN_OR_RETURN(tune::TuneResult tuned, tune::Tune(*model, engine));
  RETURN_IF_ERROR(tune::SaveTuned(checkpoint_path, tuned));

  TuneResult result;
  result.checkpoint_path = checkpoint_path;
  result.candidate = tuned.chosen_row().candidate;
  result.threads = tuned.chosen_row().threads;
  for (const tune::TuneRow& row : tuned.rows) {
    result.rows.push_back({.candidate = row.candidate,
                           .threads = row.threads,
                           .status = tune::TuneRowStatusName(row.status),
                           .why = row.why,
                           .sqnr_db = row.sqnr_db,
                           .latency_ms = row.latency_ms,
                           .fp32_latency_ms = row.fp32_latency_ms,
                           .replayed = row.replayed,
                           .chosen = row.chosen});
  }
  result.json = DumpJson(tune::TuneResultToJson(tuned, model_path, checkpoint_path), 2);
  return result;
}

}  // namespace qtune
