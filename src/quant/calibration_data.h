// Calibration samples for post-training quantization: where they come from and how they
// are cut into batches (docs/calibration.md).
//
// Data specs (the `--calib` arguments of `qtune quantize`):
//   NAME=FILE.npy   one array for model input NAME, samples along the first axis;
//                   repeat once per model input. A bare FILE.npy is accepted when the
//                   model has one input.
//   FILE.npz        one array per model input, keyed by input name (a single-array
//                   archive feeds a single-input model whatever the key).
//   DIR             a folder of .jpg/.jpeg/.png images, sorted by file name, one sample
//                   each, turned into the model's one image input by the preprocess spec
//                   (image_preprocess.h). Decoded per batch: a large folder is never held
//                   in memory.
// Every model input must get data, all inputs the same sample count, the dtype the model
// declares, the model's rank, and the model's sizes wherever those are fixed (the first,
// batch, axis excepted).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::quant {

class CalibrationSource {
 public:
  virtual ~CalibrationSource() = default;

  // Number of samples available.
  virtual int64_t num_samples() const = 0;
  // Samples [first, first + count) of every model input, by input name, batched along
  // axis 0. The tensors may borrow the source's memory: they stay valid while the source
  // lives. REQUIRES: 0 <= first, count > 0, first + count <= num_samples().
  // Errors (an unreadable image, ...) name the file.
  virtual StatusOr<std::map<std::string, Tensor>> Batch(int64_t first, int64_t count) = 0;
  // One line for logs: "calib_512.npy (512 samples)".
  virtual std::string Describe() const = 0;
};

// Opens `specs` (see above) for `model`. `preprocess` is the image preprocess spec; it must
// be empty unless the spec is an image folder. Everything but image decoding is checked
// here, so a bad file fails before the model runs.
StatusOr<std::unique_ptr<CalibrationSource>> OpenCalibrationData(
    const std::vector<std::string>& specs, const std::string& preprocess, const ir::Graph& model);

// The batch size the model insists on: a known positive first dimension of any input;
// nullopt when every input's batch axis is free.
std::optional<int64_t> FixedBatchSize(const ir::Graph& model);

struct RandomDataOptions {
  int64_t num_samples = 64;
  uint64_t seed = 0;  // the same seed gives the same samples, whatever the batching
  float low = 0.0f;   // samples are uniform in [low, high)
  float high = 1.0f;
  // Size used for a dynamic dimension other than the batch axis; 0 refuses such inputs.
  int64_t dynamic_size = 0;
};

// Uniform random samples for every model input (`--random-calibration`: ranges from it
// say nothing about real data; the CLI warns). Float inputs only; fixed sizes needed
// except on the batch axis (or set dynamic_size).
StatusOr<std::unique_ptr<CalibrationSource>> MakeRandomCalibrationData(
    const ir::Graph& model, const RandomDataOptions& options);

}  // namespace qtune::quant
