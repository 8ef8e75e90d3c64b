// qtune/autotune.h: search where Q/DQ nodes pay off by measuring, and write the fastest
// QDQ model (docs/autotune.md). What `qtune autotune MODEL -o OUT --calib DATA --work-dir
// DIR --json` does.
//
//   qtune::AutotuneOptions options;
//   options.calib = {"calib.npy"};
//   options.work_dir = "work";                 // the same folder again resumes the search
//   options.mode = "quick";
//   auto result = qtune::Autotune("model.onnx", "model.tuned.onnx", options);
//   if (result.ok()) std::printf("%.2fx faster than fp32\n", result->speedup_vs_fp32);
//
// Contract: measures in a child process, the library's own qtune-measure, which it finds
// itself (installed in <prefix>/libexec/qtune/; docs/cmake.md): no `qtune` on the PATH is
// needed. `qtune_binary`, else $QTUNE_BINARY, names another (a qtune-measure or qtune
// executable); one that is not an executable file is FailedPrecondition. Writes `output_path` and
// the work dir (state log, report.json, report.html; docs/formats/autotune-report.md). A failed
// candidate is part of the result, not an error.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "status.h"
#include "tensor.h"

namespace qtune {

struct AutotuneOptions {
  std::vector<std::string> calib;  // as QuantizeOptions::calib
  // As QuantizeOptions::calib_tensors; written into work_dir/calib_tensors/ (kept for
  // warm restarts, named by content so other data is a new search).
  std::vector<std::pair<std::string, Tensor>> calib_tensors;
  std::string preprocess;
  std::string recipe = "int8";
  std::string work_dir;           // required; created when missing
  std::string mode = "default";   // quick | default | extensive: how many schemes to try
  int threads = 1;                // threads the models are measured with
  double min_sqnr_db = 0;         // > 0: refuse placements below this output SQNR vs fp32
  int64_t max_calib_samples = 0;  // 0: every sample
  uint64_t seed = 0;              // the search's seed
  std::string qtune_binary;       // the measuring executable; empty: found (see Contract)
  bool show_progress = false;     // progress on stderr
};

struct AutotuneResult {
  std::string output_path;
  double latency_ms = 0;       // of the written model (0 when the report has none)
  double speedup_vs_fp32 = 0;  // measured interleaved with the fp32 model
  double speedup_vs_rule = 0;  // ... and with the rule-based placement (qtune::Quantize)
  // The report (docs/formats/autotune-report.md), also in <work_dir>/report.json.
  std::string report_json;
};

StatusOr<AutotuneResult> Autotune(const std::string& model_path, const std::string& output_path,
                                  const AutotuneOptions& options);

}  // namespace qtune
