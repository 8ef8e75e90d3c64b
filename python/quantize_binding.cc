// qtune._qtune.quantize(model, output, calib, recipe="int8", threads=1, max_samples=0) ->
// dict. `calib` is a calibration data spec or a list of them (docs/calibration.md: .npy,
// .npz, an image folder; data in memory was streamed into files by python/qtune/_api.py);
// the result is the summary `qtune quantize --json` prints (docs/formats/summary.md) with
// "output" set, which qtune.quantize turns into a QuantizeResult.
#include "quantize_binding.h"

#include <pybind11/stl.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calib_data.h"
#include "core/json_limits.h"
#include "errors.h"
#include "ir/onnx_io.h"
#include "quant/quantize_model.h"
#include "quant/summary.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

py::dict Quantize(const std::string& model_path, const std::string& output_path,
                  const py::object& calib, const std::string& recipe, int threads,
                  int64_t max_samples) {
  quant::QuantizeModelOptions options;
  options.recipe = recipe;
  options.calib_specs = CalibSpecs(calib);
  options.threads = threads;
  options.max_calib_samples = max_samples;
  options.show_progress = true;  // to Python (log_bridge.h), not stderr
  std::string summary_text;
  {
    py::gil_scoped_release release;
    auto graph = ir::LoadModel(model_path);
    if (!graph.ok()) {
      py::gil_scoped_acquire acquire;
      ThrowStatus(graph.status());
    }
    auto result = quant::QuantizeModel(**graph, options);
    if (!result.ok()) {
      py::gil_scoped_acquire acquire;
      ThrowStatus(result.status());
    }
    Status saved = ir::SaveModel(*result->quantized, output_path);
    if (!saved.ok()) {
      py::gil_scoped_acquire acquire;
      ThrowStatus(saved);
    }
    nlohmann::json json = quant::SummaryToJson(result->summary);
    json["output"] = output_path;
    json["calibration_source"] = result->calibration_source;
    summary_text = qtune::DumpJson(json);
  }
  return py::module_::import("json").attr("loads")(summary_text).cast<py::dict>();
}

}  // namespace

void BindQuantize(py::module_& module) {
  module.def("quantize", &Quantize, py::arg("model"), py::arg("output"), py::arg("calib"),
             py::arg("recipe") = "int8", py::arg("threads") = 1, py::arg("max_samples") = 0,
             "Quantizes MODEL (.onnx) with RECIPE (a preset name or YAML file), calibrating "
             "on CALIB, and writes the QDQ model to OUTPUT. Returns the summary of "
             "`qtune quantize --json`.");
}

}  // namespace qtune::python
