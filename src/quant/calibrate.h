// Activation calibration: runs the float model over calibration data and streams the
// requested tensors into calibrators (calibrator.h), one per tensor.
//
// Memory: one batch of inputs and of the requested tensors at a time, plus one histogram
// per tensor; never the whole data set. Lower the batch size to lower the peak.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/calibration_data.h"
#include "quant/quant_types.h"

namespace qtune::quant {

// What to calibrate for one tensor: the method and the format its amax is chosen for.
struct CalibrationRequest {
  CalibratorConfig calibrator;
  QuantFormat format = QuantFormat::kInt8;
};

struct CalibrateOptions {
  int64_t batch_size = 32;  // samples per engine run; a model with a fixed batch size
                            // (a known first input dimension) uses that instead
  int64_t max_samples = 0;  // 0: every sample of the source
  int threads = 1;          // engine threads, and threads feeding the calibrators
  bool use_onednn = true;   // false: reference kernels only (slow; for tests)
  bool show_progress = true;
};

// Returns the range of every requested value (graph inputs or values computed by nodes).
// `graph` is not modified (a clone gets the requested values as extra outputs, so the
// engine's fusions keep them). Errors name the values that do not exist, are weights,
// are never computed or are not floating point (all of them at once), the calibrator
// configuration a value cannot use, and the batch and file of a failing run.
StatusOr<std::map<std::string, TensorRange>> CalibrateActivations(
    const ir::Graph& graph, const std::map<std::string, CalibrationRequest>& requests,
    CalibrationSource& source, const CalibrateOptions& options);

}  // namespace qtune::quant
