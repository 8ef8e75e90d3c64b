// Activation calibration: runs the float model over calibration data and streams the
// requested tensors into calibrators (calibrator.h), one per tensor.
//
// Memory: one batch of inputs and of the requested tensors at a time, plus one histogram
// per tensor; never the whole data set. The batch size follows a memory budget unless given.
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
  // Samples per engine run; <= 0: chosen so that a batch's tensors fit
  // memory_budget_bytes (measured on a first one-sample run). A model with a fixed batch
  // size (a known first input dimension) uses that instead.
  int64_t batch_size = 0;
  int64_t memory_budget_bytes = int64_t{1} << 30;
  int64_t max_samples = 0;  // 0: every sample of the source
  int threads = 1;          // engine threads, and threads feeding the calibrators
  bool use_onednn = true;   // false: reference kernels only (slow; for tests)
  bool show_progress = true;
};

// The auto batch size: samples per batch so that one batch's tensors (`sample_bytes`: the
// inputs and every tensor returned for calibration, measured on a one-sample run), three
// times over for the engine's own buffers and the float copies the calibrators read, fit
// `budget_bytes` (measured: PP-OCRv4 det at 640x640 peaks at about 2.6x per sample).
// At least 1, at most 32 (larger batches gain nothing on a CPU).
int64_t AutoCalibrationBatch(int64_t sample_bytes, int64_t budget_bytes);

// Returns the range of every requested value (graph inputs or values computed by nodes).
// `graph` is not modified (a clone gets the requested values as extra outputs, so the
// engine's fusions keep them). Errors name the values that do not exist, are weights,
// are never computed or are not floating point (all of them at once), the calibrator
// configuration a value cannot use, and the batch and file of a failing run.
StatusOr<std::map<std::string, TensorRange>> CalibrateActivations(
    const ir::Graph& graph, const std::map<std::string, CalibrationRequest>& requests,
    CalibrationSource& source, const CalibrateOptions& options);

}  // namespace qtune::quant
