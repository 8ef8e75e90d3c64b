// Uniform random calibration samples (calibration_data.h, MakeRandomCalibrationData).
// Sample i of input k is drawn from a generator seeded by (seed, k, i), so a sample does
// not depend on the batch it is asked for in.
#include <random>

#include "quant/calibration_data.h"
#include "quant/calibration_sources.h"

namespace qtune::quant {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class RandomSource : public CalibrationSource {
 public:
  struct Input {
    std::string name;
    std::vector<int64_t> sample_sizes;  // sizes without the batch axis
  };
  RandomSource(std::vector<Input> inputs, RandomDataOptions options)
      : inputs_(std::move(inputs)), options_(options) {}

  int64_t num_samples() const override { return options_.num_samples; }

  StatusOr<std::map<std::string, Tensor>> Batch(int64_t first, int64_t count) override {
    if (first < 0 || count <= 0 || first + count > num_samples()) {
      return OutOfRangeError("calibration batch [" + std::to_string(first) + ", " +
                             std::to_string(first + count) + ") is outside the " +
                             std::to_string(num_samples()) + " random samples");
    }
    std::map<std::string, Tensor> batch;
    for (size_t k = 0; k < inputs_.size(); ++k) {
      std::vector<int64_t> sizes = {count};
      sizes.insert(sizes.end(), inputs_[k].sample_sizes.begin(), inputs_[k].sample_sizes.end());
      ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(DataType::kFloat32, sizes));
      const int64_t per_sample = tensor.num_elements() / count;
      float* out = tensor.data<float>();
      const float range = options_.high - options_.low;
      for (int64_t i = 0; i < count; ++i) {
        std::mt19937_64 rng(SplitMix64(
            options_.seed ^ SplitMix64(k * 0x100000001ull + static_cast<uint64_t>(first + i))));
        for (int64_t j = 0; j < per_sample; ++j) {
          float unit = static_cast<float>(rng() >> 40) * (1.0f / 16777216.0f);  // [0, 1)
          out[i * per_sample + j] = options_.low + range * unit;
        }
      }
      batch[inputs_[k].name] = std::move(tensor);
    }
    return batch;
  }

  std::string Describe() const override {
    return "random uniform [" + std::to_string(options_.low) + ", " +
           std::to_string(options_.high) + ") data, seed " + std::to_string(options_.seed) + " (" +
           std::to_string(options_.num_samples) + " samples)";
  }

 private:
  std::vector<Input> inputs_;
  RandomDataOptions options_;
};

}  // namespace

StatusOr<std::unique_ptr<CalibrationSource>> MakeRandomCalibrationData(
    const ir::Graph& model, const RandomDataOptions& options) {
  if (options.num_samples <= 0) {
    return InvalidArgumentError("random calibration needs a positive number of samples");
  }
  if (!(options.low < options.high)) {
    return InvalidArgumentError("random calibration: low must be below high");
  }
  std::vector<RandomSource::Input> inputs;
  for (const ir::Value* value : model.inputs()) {
    const std::string where =
        "random calibration data for input '" + value->name() + "' (" + DescribeInput(*value) + ")";
    if (value->dtype() != DataType::kFloat32) {
      return InvalidArgumentError(where + ": only float32 inputs can be random; give real data");
    }
    if (!value->type().shape || value->type().shape->rank() == 0) {
      return InvalidArgumentError(where + ": the input's sizes are unknown; give real data");
    }
    RandomSource::Input input{value->name(), {}};
    const Shape& shape = *value->type().shape;
    for (size_t i = 1; i < shape.rank(); ++i) {
      int64_t size = shape.dim(i).is_known() ? shape.dim(i).value : options.dynamic_size;
      if (size <= 0) {
        return InvalidArgumentError(where + ": dimension " + std::to_string(i) +
                                    " is not fixed; give real data");
      }
      input.sample_sizes.push_back(size);
    }
    inputs.push_back(std::move(input));
  }
  return std::unique_ptr<CalibrationSource>(new RandomSource(std::move(inputs), options));
}

}  // namespace qtune::quant
