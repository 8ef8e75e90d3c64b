// Internal to the calibration data sources (calibration_data.h): the pieces shared by the
// array, image-folder and random sources.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "quant/calibration_data.h"

namespace qtune::quant {

// "float32 [N,1,28,28]" for error messages.
std::string DescribeInput(const ir::Value& input);

// Checks an array of samples (axis 0) against model input `input`: dtype, rank, and every
// fixed size but the first. Errors name `source` (the file) and the input.
Status CheckArrayForInput(const Tensor& array, const ir::Value& input, const std::string& source);

// The image-folder source (image_folder_source.cc).
StatusOr<std::unique_ptr<CalibrationSource>> OpenImageFolder(const std::string& dir,
                                                             const std::string& preprocess,
                                                             const ir::Graph& model);

}  // namespace qtune::quant
