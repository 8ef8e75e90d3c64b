// qtune._qtune.eval: cli::Evaluate, the code behind `qtune eval --json`, with the data as
// paths (qtune.eval streams data in memory into files first, python/qtune/_api.py).
#include "eval_binding.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "calib_data.h"
#include "cli/eval.h"
#include "errors.h"
#include "inspect_binding.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

py::object Eval(const std::string& fp32, const std::string& quantized, const py::object& data,
                const std::optional<std::string>& labels, int64_t batch, int64_t layer_samples,
                int worst, int threads) {
  cli::EvalOptions options;
  options.fp32_path = fp32;
  options.quant_path = quantized;
  options.data = CalibSpecs(data);
  options.labels_path = labels.value_or("");
  options.batch = batch;
  options.layer_samples = layer_samples;
  options.worst = worst;
  options.threads = threads;
  options.json = true;
  options.show_progress = true;  // to Python (log_bridge.h), not stderr
  nlohmann::json report;
  Status status;
  {
    py::gil_scoped_release release;
    status = cli::Evaluate(options, report);
  }
  ThrowIfError(status);
  return JsonToPython(report);
}

}  // namespace

void BindEval(py::module_& module) {
  module.def("eval", &Eval, py::arg("fp32"), py::arg("quantized"), py::arg("data"),
             py::arg("labels") = py::none(), py::arg("batch") = 64, py::arg("layer_samples") = 64,
             py::arg("worst") = 10, py::arg("threads") = 1,
             "`qtune eval FP32 QUANTIZED --data DATA [--labels Y.npy] --json`: top-1 "
             "agreement, accuracy against the labels (a .npy path), per-output SQNR and the "
             "worst tensors, as a dict. DATA takes what quantize's calib= takes.");
}

}  // namespace qtune::python
