#include "quant/calibration_data.h"

#include <filesystem>
#include <utility>

#include "core/logging.h"
#include "core/npy.h"
#include "core/npz.h"
#include "core/shape.h"
#include "quant/calibration_sources.h"

namespace qtune::quant {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string InputNames(const ir::Graph& model) {
  std::string names;
  for (const ir::Value* input : model.inputs()) {
    names += (names.empty() ? "'" : ", '") + input->name() + "'";
  }
  return names;
}

// Arrays already in memory (.npy / .npz), sliced along axis 0 without copying.
class ArraySource : public CalibrationSource {
 public:
  struct Entry {
    std::string input;
    std::string file;
    Tensor array;
  };
  ArraySource(std::vector<Entry> entries, int64_t samples)
      : entries_(std::move(entries)), samples_(samples) {}

  int64_t num_samples() const override { return samples_; }

  StatusOr<std::map<std::string, Tensor>> Batch(int64_t first, int64_t count) override {
    if (first < 0 || count <= 0 || first + count > samples_) {
      return OutOfRangeError("calibration batch [" + std::to_string(first) + ", " +
                             std::to_string(first + count) + ") is outside the " +
                             std::to_string(samples_) + " samples");
    }
    std::map<std::string, Tensor> batch;
    for (Entry& entry : entries_) {
      std::vector<int64_t> sizes = entry.array.sizes();
      const size_t sample_bytes = entry.array.byte_size() / static_cast<size_t>(sizes[0]);
      sizes[0] = count;
      auto* base = static_cast<std::byte*>(entry.array.raw_data());
      batch[entry.input] = Tensor::Borrow(entry.array.dtype(), std::move(sizes),
                                          base + sample_bytes * static_cast<size_t>(first));
    }
    return batch;
  }

  std::string Describe() const override {
    std::string files;
    for (const Entry& entry : entries_) {
      if (files.find(entry.file) == std::string::npos)
        files += (files.empty() ? "" : ", ") + entry.file;
    }
    return files + " (" + std::to_string(samples_) + " samples)";
  }

 private:
  std::vector<Entry> entries_;
  int64_t samples_;
};

StatusOr<std::unique_ptr<CalibrationSource>> OpenArrays(const std::vector<std::string>& specs,
                                                        const ir::Graph& model) {
  std::vector<ArraySource::Entry> entries;
  auto add = [&](std::string input, std::string file, Tensor array) -> Status {
    for (const auto& entry : entries) {
      if (entry.input == input) {
        return InvalidArgumentError("calibration data for input '" + input + "' given twice (" +
                                    entry.file + " and " + file + ")");
      }
    }
    entries.push_back({std::move(input), std::move(file), std::move(array)});
    return Status::Ok();
  };
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq != std::string::npos && spec.find('/') > eq) {  // NAME=FILE.npy
      std::string name = spec.substr(0, eq);
      std::string file = spec.substr(eq + 1);
      if (model.FindValue(name) == nullptr || !model.FindValue(name)->is_graph_input()) {
        return NotFoundError("calibration data '" + spec + "': the model has no input '" + name +
                             "'; its inputs are " + InputNames(model));
      }
      ASSIGN_OR_RETURN(Tensor array, ReadNpy(file));
      RETURN_IF_ERROR(add(name, file, std::move(array)));
    } else if (EndsWith(spec, ".npz")) {
      ASSIGN_OR_RETURN(NpzEntries arrays, ReadNpz(spec));
      if (arrays.size() == 1 && model.inputs().size() == 1) {
        RETURN_IF_ERROR(add(model.inputs()[0]->name(), spec, std::move(arrays[0].second)));
        continue;
      }
      for (auto& [key, array] : arrays) {
        const ir::Value* value = model.FindValue(key);
        if (value == nullptr || !value->is_graph_input()) {
          QTUNE_LOG_WARNING("{}: array '{}' matches no model input; ignored", spec, key);
          continue;
        }
        RETURN_IF_ERROR(add(key, spec, std::move(array)));
      }
    } else if (EndsWith(spec, ".npy")) {
      if (model.inputs().size() != 1) {
        return InvalidArgumentError(
            "calibration data '" + spec + "': the model has " +
            std::to_string(model.inputs().size()) +
            " inputs; name each one: NAME=FILE.npy (inputs: " + InputNames(model) + ")");
      }
      ASSIGN_OR_RETURN(Tensor array, ReadNpy(spec));
      RETURN_IF_ERROR(add(model.inputs()[0]->name(), spec, std::move(array)));
    } else if (std::error_code error; !std::filesystem::exists(spec, error)) {
      return NotFoundError("calibration data '" + spec + "': no such file or folder");
    } else {
      return InvalidArgumentError("calibration data '" + spec +
                                  "': expected NAME=FILE.npy, FILE.npy, FILE.npz or an image "
                                  "folder");
    }
  }
  int64_t samples = -1;
  std::string first_file;
  for (const ir::Value* input : model.inputs()) {
    const ArraySource::Entry* entry = nullptr;
    for (const auto& e : entries) {
      if (e.input == input->name()) entry = &e;
    }
    if (entry == nullptr) {
      return InvalidArgumentError("no calibration data for model input '" + input->name() + "' (" +
                                  DescribeInput(*input) + "): add " + input->name() +
                                  "=FILE.npy or put an array '" + input->name() + "' in the .npz");
    }
    RETURN_IF_ERROR(CheckArrayForInput(entry->array, *input, entry->file));
    int64_t n = entry->array.size(0);
    if (samples >= 0 && n != samples) {
      return InvalidArgumentError(entry->file + ": " + std::to_string(n) + " samples for input '" +
                                  input->name() + "' but " + first_file + " has " +
                                  std::to_string(samples) +
                                  "; every input needs the same number of samples");
    }
    samples = n;
    first_file = entry->file;
  }
  if (samples <= 0) {
    return InvalidArgumentError(first_file + ": no samples (the first axis is 0)");
  }
  return std::unique_ptr<CalibrationSource>(new ArraySource(std::move(entries), samples));
}

}  // namespace

std::string DescribeInput(const ir::Value& input) {
  return std::string(DataTypeName(input.dtype())) + " " +
         (input.type().shape ? input.type().shape->ToString() : std::string("(unknown shape)"));
}

Status CheckArrayForInput(const Tensor& array, const ir::Value& input, const std::string& source) {
  const std::string prefix = source + ": array for input '" + input.name() + "'";
  if (array.dtype() != input.dtype()) {
    return InvalidArgumentError(prefix + " is " + std::string(DataTypeName(array.dtype())) +
                                " but the model input is " + DescribeInput(input) +
                                "; convert it (numpy: arr.astype(...))");
  }
  if (array.rank() == 0) {
    return InvalidArgumentError(prefix + " is a scalar; samples go along the first axis");
  }
  if (!input.type().shape) return Status::Ok();
  const Shape& shape = *input.type().shape;
  bool fits = shape.rank() == array.rank();
  for (size_t i = 1; fits && i < shape.rank(); ++i) {
    fits = !shape.dim(i).is_known() || shape.dim(i).value == array.size(i);
  }
  if (!fits) {
    return InvalidArgumentError(prefix + " has sizes " + SizesToString(array.sizes()) +
                                ", incompatible with the model input " + DescribeInput(input) +
                                " (samples go along the first axis; the other sizes must match)");
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<CalibrationSource>> OpenCalibrationData(
    const std::vector<std::string>& specs, const std::string& preprocess, const ir::Graph& model) {
  if (specs.empty()) {
    return InvalidArgumentError(
        "no calibration data: give NAME=FILE.npy, FILE.npz or an image folder");
  }
  if (model.inputs().empty()) return InvalidArgumentError("the model has no inputs to calibrate");
  for (const std::string& spec : specs) {
    std::error_code error;
    if (!std::filesystem::is_directory(spec, error)) continue;
    if (specs.size() != 1) {
      return InvalidArgumentError("image folder '" + spec +
                                  "' must be the only calibration data spec");
    }
    return OpenImageFolder(spec, preprocess, model);
  }
  if (!preprocess.empty()) {
    return InvalidArgumentError("a preprocess spec applies to image folders only; '" + specs[0] +
                                "' is not a folder");
  }
  return OpenArrays(specs, model);
}

std::optional<int64_t> FixedBatchSize(const ir::Graph& model) {
  for (const ir::Value* input : model.inputs()) {
    const auto& shape = input->type().shape;
    if (shape && shape->rank() > 0 && shape->dim(0).is_known() && shape->dim(0).value > 0) {
      return shape->dim(0).value;
    }
  }
  return std::nullopt;
}

}  // namespace qtune::quant
