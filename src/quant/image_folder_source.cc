// The image-folder calibration source: one sample per .jpg/.jpeg/.png file, sorted by
// name, decoded and preprocessed only when its batch is asked for.
#include <algorithm>
#include <filesystem>

#include "quant/calibration_sources.h"
#include "quant/image_io.h"
#include "quant/image_preprocess.h"

namespace qtune::quant {
namespace {

class ImageFolderSource : public CalibrationSource {
 public:
  ImageFolderSource(std::string dir, std::vector<std::string> files, PreprocessSpec spec,
                    std::string input, ImageSize size)
      : dir_(std::move(dir)),
        files_(std::move(files)),
        spec_(std::move(spec)),
        input_(std::move(input)),
        size_(size) {}

  int64_t num_samples() const override { return static_cast<int64_t>(files_.size()); }

  StatusOr<std::map<std::string, Tensor>> Batch(int64_t first, int64_t count) override {
    if (first < 0 || count <= 0 || first + count > num_samples()) {
      return OutOfRangeError("calibration batch [" + std::to_string(first) + ", " +
                             std::to_string(first + count) + ") is outside the " +
                             std::to_string(num_samples()) + " images");
    }
    const int64_t c = spec_.channels();
    std::vector<int64_t> sizes = spec_.nhwc
                                     ? std::vector<int64_t>{count, size_.height, size_.width, c}
                                     : std::vector<int64_t>{count, c, size_.height, size_.width};
    ASSIGN_OR_RETURN(Tensor batch, Tensor::Allocate(DataType::kFloat32, sizes));
    const int64_t sample_elements = c * size_.height * size_.width;
    for (int64_t i = 0; i < count; ++i) {
      const std::string& path = files_[first + i];
      ASSIGN_OR_RETURN(RgbImage image, ReadImage(path));
      RETURN_IF_ERROR(
          PreprocessImage(image, spec_, size_, path, batch.data<float>() + i * sample_elements));
    }
    std::map<std::string, Tensor> result;
    result[input_] = std::move(batch);
    return result;
  }

  std::string Describe() const override {
    return dir_ + " (" + std::to_string(files_.size()) + " images, " +
           std::to_string(size_.height) + "x" + std::to_string(size_.width) + ")";
  }

 private:
  std::string dir_;
  std::vector<std::string> files_;
  PreprocessSpec spec_;
  std::string input_;
  ImageSize size_;
};

}  // namespace

StatusOr<std::unique_ptr<CalibrationSource>> OpenImageFolder(const std::string& dir,
                                                             const std::string& preprocess,
                                                             const ir::Graph& model) {
  ASSIGN_OR_RETURN(PreprocessSpec spec, ParsePreprocessSpec(preprocess));
  if (model.inputs().size() != 1) {
    return InvalidArgumentError(
        "image folder '" + dir + "' feeds models with one input; this one has " +
        std::to_string(model.inputs().size()) + ": give NAME=FILE.npy for each instead");
  }
  const ir::Value& input = *model.inputs()[0];
  const std::string where =
      "image folder '" + dir + "' for input '" + input.name() + "' (" + DescribeInput(input) + ")";
  if (input.dtype() != DataType::kFloat32) {
    return InvalidArgumentError(where + ": images become float32 data; the input is not float32");
  }
  const Shape* shape = input.type().shape ? &*input.type().shape : nullptr;
  if (shape != nullptr && shape->rank() != 4) {
    return InvalidArgumentError(where + ": images need a rank-4 input (NCHW, or NHWC with nhwc)");
  }
  auto dim = [&](int axis) { return shape != nullptr ? shape->dim(axis).value : int64_t{-1}; };
  const int64_t model_c = dim(spec.nhwc ? 3 : 1);
  const int64_t model_h = dim(spec.nhwc ? 1 : 2);
  const int64_t model_w = dim(spec.nhwc ? 2 : 3);
  if (model_c >= 0 && model_c != spec.channels()) {
    return InvalidArgumentError(where + ": the input has " + std::to_string(model_c) +
                                " channels but the images give " + std::to_string(spec.channels()) +
                                (model_c == 1 ? "; add 'gray' to the preprocess spec"
                                 : spec.nhwc
                                     ? "; check 'gray' in the preprocess spec"
                                     : "; if the model is NHWC add 'nhwc' to the preprocess spec"));
  }
  std::optional<ImageSize> size = spec.crop ? spec.crop : spec.resize_exact;
  if (!size) {
    if (model_h < 0 || model_w < 0) {
      return InvalidArgumentError(where +
                                  ": the input's height and width are not fixed; give crop=HxW "
                                  "or resize=HxW in the preprocess spec");
    }
    size = ImageSize{model_h, model_w};
  }
  if ((model_h >= 0 && model_h != size->height) || (model_w >= 0 && model_w != size->width)) {
    return InvalidArgumentError(where + ": the preprocess spec makes " +
                                std::to_string(size->height) + "x" + std::to_string(size->width) +
                                " images but the input needs " + std::to_string(model_h) + "x" +
                                std::to_string(model_w));
  }

  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::error_code file_error;
    if (entry.is_regular_file(file_error) && HasImageExtension(entry.path().filename().string())) {
      files.push_back(entry.path().string());
    }
  }
  if (error) return NotFoundError("image folder '" + dir + "': " + error.message());
  if (files.empty()) {
    return InvalidArgumentError("image folder '" + dir + "' holds no .jpg, .jpeg or .png files");
  }
  std::sort(files.begin(), files.end());
  return std::unique_ptr<CalibrationSource>(
      new ImageFolderSource(dir, std::move(files), std::move(spec), input.name(), *size));
}

}  // namespace qtune::quant
