// qtune::Autotune (include/qtune/autotune.h) over autotune::RunAutotune.
#include "autotune/autotune.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "api/calib_tensors.h"
#include "core/json_limits.h"
#include "measure/measure_executable.h"
#include "qtune/autotune.h"

namespace qtune {
namespace {

double NumberAt(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0;
}

}  // namespace

StatusOr<AutotuneResult> Autotune(const std::string& model_path, const std::string& output_path,
                                  const AutotuneOptions& options) {
  if (options.work_dir.empty()) {
    return InvalidArgumentError(
        "qtune::Autotune: options.work_dir is empty; give the folder that holds the search's "
        "state (the same folder again resumes it)");
  }
  autotune::AutotuneOptions engine;
  engine.model_path = model_path;
  engine.output_path = output_path;
  engine.work_dir = options.work_dir;
  // The tensors stay in the work dir: a warm restart reads them again.
  ASSIGN_OR_RETURN(
      engine.calib_specs,
      api_internal::CalibSpecs(options.calib, options.calib_tensors,
                               (std::filesystem::path(options.work_dir) / "calib_tensors").string(),
                               "qtune::Autotune"));
  engine.preprocess = options.preprocess;
  engine.recipe = options.recipe;
  engine.max_calib_samples = options.max_calib_samples;
  engine.mode = options.mode;
  engine.threads = options.threads;
  engine.min_sqnr_db = options.min_sqnr_db;
  engine.seed = options.seed;
  engine.show_progress = options.show_progress;
  ASSIGN_OR_RETURN(engine.worker_executable, measure::FindMeasureExecutable(options.qtune_binary));
  ASSIGN_OR_RETURN(nlohmann::json report, autotune::RunAutotune(engine));
  AutotuneResult result;
  result.output_path = output_path;
  auto final_block = report.find("final");
  if (final_block != report.end() && final_block->is_object()) {
    result.latency_ms = NumberAt(*final_block, "latency_ms");
    result.speedup_vs_fp32 = NumberAt(*final_block, "speedup_vs_fp32");
    result.speedup_vs_rule = NumberAt(*final_block, "speedup_vs_rule");
  }
  result.report_json = DumpJson(report, 2);
  return result;
}

}  // namespace qtune
