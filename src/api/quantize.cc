// qtune::Quantize (include/qtune/quantize.h) over quant::QuantizeModel.
#include "qtune/quantize.h"

#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "core/npy.h"
#include "ir/onnx_io.h"
#include "quant/quantize_model.h"
#include "quant/summary.h"

namespace qtune {
namespace {

namespace fs = std::filesystem;

// A temporary folder, removed with everything in it when this goes out of scope.
class TempDir {
 public:
  static StatusOr<TempDir> Create() {
    std::string pattern = (fs::temp_directory_path() / "qtune_calib_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return InternalError("cannot create a temporary folder for the calibration tensors in " +
                           fs::temp_directory_path().string());
    }
    return TempDir(pattern);
  }
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  TempDir(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace

StatusOr<QuantizeResult> Quantize(const std::string& model_path, const std::string& output_path,
                                  const QuantizeOptions& options) {
  quant::QuantizeModelOptions engine;
  engine.recipe = options.recipe;
  engine.calib_specs = options.calib;
  std::optional<TempDir> tensor_files;
  if (!options.calib_tensors.empty()) {
    if (!options.calib.empty()) {
      return InvalidArgumentError(
          "Quantize(): give calibration data as files (calib) or as tensors (calib_tensors), "
          "not both");
    }
    ASSIGN_OR_RETURN(TempDir dir, TempDir::Create());
    tensor_files.emplace(std::move(dir));
    for (size_t i = 0; i < options.calib_tensors.size(); ++i) {
      const auto& [name, tensor] = options.calib_tensors[i];
      const std::string file =
          (fs::path(tensor_files->path()) / (std::to_string(i) + ".npy")).string();
      RETURN_IF_ERROR(WriteNpy(file, tensor).WithContext("calibration tensor '" + name + "'"));
      engine.calib_specs.push_back(name + "=" + file);
    }
  }
  engine.preprocess = options.preprocess;
  engine.max_calib_samples = options.max_calib_samples;
  engine.threads = options.threads;
  engine.show_progress = options.show_progress;
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> model, ir::LoadModel(model_path));
  ASSIGN_OR_RETURN(quant::QuantizeModelResult result, quant::QuantizeModel(*model, engine));
  RETURN_IF_ERROR(ir::SaveModel(*result.quantized, output_path));
  nlohmann::json summary = quant::SummaryToJson(result.summary);
  summary["output"] = output_path;
  summary["calibration_source"] = result.calibration_source;
  QuantizeResult out;
  out.output_path = output_path;
  out.quantized_layers = result.summary.quantized_layers;
  out.float_layers = result.summary.float_layers;
  out.warnings = result.summary.warnings;
  out.summary_json = summary.dump(2);
  return out;
}

}  // namespace qtune
