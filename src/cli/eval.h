// The evaluation behind `qtune eval` (eval_command.cc), for the CLI and the Python module:
// top-1 agreement of a quantized model with its fp32 model, accuracy against labels,
// per-output SQNR and the worst tensors, as the JSON `qtune eval --json` prints.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/global_flags.h"
#include "core/status.h"

namespace qtune::cli {

struct EvalOptions {
  std::string fp32_path;
  std::string quant_path;
  std::vector<std::string> data;
  std::string preprocess;
  std::string labels_path;
  int64_t batch = 64;
  int64_t layer_samples = 64;
  int worst = 10;
  int threads = OfflineThreadsDefault();
  bool json = false;
  bool show_progress = true;  // off with --json (and --quiet/--no-progress, process-wide)
};

// Fills `report` (docs/eval.md). Errors name the model or data file.
Status Evaluate(const EvalOptions& o, nlohmann::json& report);

}  // namespace qtune::cli
