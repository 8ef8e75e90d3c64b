// Calibration tensors of the public API (QuantizeOptions, TuneOptions, AutotuneOptions::
// calib_tensors) turned into the engine's calibration specs, through .npy files.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/file_io.h"
#include "core/status.h"
#include "core/tensor.h"

namespace qtune::api_internal {

using CalibTensors = std::vector<std::pair<std::string, Tensor>>;

// The specs for `files` or `tensors` (an error when both are given; `caller` names the API
// function in it). Each tensor is written into `dir` (created if missing) as
// <sha256 of the file>.npy and named "INPUT=<file>": the spec changes exactly when the
// data does, so a state log fingerprinted by the specs (autotune) resumes on the same
// data and refuses other data.
StatusOr<std::vector<std::string>> CalibSpecs(const std::vector<std::string>& files,
                                              const CalibTensors& tensors, const std::string& dir,
                                              const std::string& caller);

// CalibSpecs() with the tensors in a temporary folder that lives as long as the result.
struct TemporaryCalib {
  std::vector<std::string> specs;
  std::optional<TempFolder> files;  // only when there are tensors
};
StatusOr<TemporaryCalib> TemporaryCalibSpecs(const std::vector<std::string>& files,
                                             const CalibTensors& tensors,
                                             const std::string& caller);

}  // namespace qtune::api_internal
