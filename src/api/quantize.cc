// qtune::Quantize (include/qtune/quantize.h) over quant::QuantizeModel.
#include "qtune/quantize.h"

#include <nlohmann/json.hpp>

#include "api/calib_tensors.h"
#include "core/json_limits.h"
#include "ir/onnx_io.h"
#include "quant/quantize_model.h"
#include "quant/summary.h"

namespace qtune {

StatusOr<QuantizeResult> Quantize(const std::string& model_path, const std::string& output_path,
                                  const QuantizeOptions& options) {
  quant::QuantizeModelOptions engine;
  engine.recipe = options.recipe;
  ASSIGN_OR_RETURN(
      api_internal::TemporaryCalib calib,
      api_internal::TemporaryCalibSpecs(options.calib, options.calib_tensors, "qtune::Quantize"));
  engine.calib_specs = calib.specs;
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
  out.summary_json = DumpJson(summary, 2);
  return out;
}

}  // namespace qtune
