// qtune/quantize.h: post-training quantization of an ONNX model into a standard QDQ model
// (docs/quantize.md). What `qtune quantize MODEL -o OUT --calib DATA --json` does.
//
//   qtune::QuantizeOptions options;
//   options.calib = {"calib.npy"};
//   auto result = qtune::Quantize("model.onnx", "model.int8.onnx", options);
//   if (result.ok()) std::printf("%d layers quantized\n", result->quantized_layers);
//
// Contract: reads `model_path` and the calibration files, writes `output_path` (the QDQ
// model; ONNX Runtime and TensorRT run it too) and nothing else (`calib_tensors` pass
// through .npy files in a temporary folder, removed before Quantize returns). Errors name the file,
// input or node and say what to pass: no calibration data, data that does not fit the
// model's inputs, a recipe that does not load.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "status.h"
#include "tensor.h"

namespace qtune {

struct QuantizeOptions {
  // Calibration data, as `--calib` takes it (docs/calibration.md): .npy / .npz files or a
  // folder of images (then `preprocess` says how to turn them into inputs).
  std::vector<std::string> calib;
  // Or the data itself: one tensor per model input, by input name, samples along axis 0
  // (what a .npy file per input holds). Give `calib` or `calib_tensors`, not both.
  std::vector<std::pair<std::string, Tensor>> calib_tensors;
  std::string preprocess;         // image preprocess spec, e.g. "resize=224,mean=imagenet"
  std::string recipe = "int8";    // a preset name (int8, fp8, ort, ...) or a recipe YAML file
  int64_t max_calib_samples = 0;  // 0: every sample
  int threads = 1;                // calibration threads
  bool show_progress = false;     // a progress bar on stderr
};

struct QuantizeResult {
  std::string output_path;
  int quantized_layers = 0;  // nodes that compute quantized
  int float_layers = 0;      // nodes left in float (summary_json says why, per node)
  std::vector<std::string> warnings;
  // The summary `qtune quantize --json` prints (docs/formats/summary.md), with "output" and
  // "calibration_source" set.
  std::string summary_json;
};

StatusOr<QuantizeResult> Quantize(const std::string& model_path, const std::string& output_path,
                                  const QuantizeOptions& options);

}  // namespace qtune
