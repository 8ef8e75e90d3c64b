// qtune.inspect: an ONNX model's outline (cli::SummarizeModel, the code behind
// `qtune inspect --json`) or a checkpoint's manifest (tune::ManifestToJson), as a dict.
#include "inspect_binding.h"

#include <string>

#include "cli/model_summary.h"
#include "core/json_limits.h"
#include "errors.h"
#include "ir/onnx_io.h"
#include "tune/checkpoint.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

py::object Inspect(const std::string& path, bool verify) {
  nlohmann::json json;
  {
    py::gil_scoped_release release;
    if (tune::LooksLikeCheckpoint(path)) {
      tune::LoadCheckpointOptions options;
      options.verify = verify;
      auto manifest = tune::ReadManifestOnly(path, options);
      if (!manifest.ok()) {
        py::gil_scoped_acquire acquire;
        ThrowStatus(manifest.status());
      }
      json = tune::ManifestToJson(*manifest);
    } else {
      auto graph = ir::LoadModel(path);
      if (!graph.ok()) {
        py::gil_scoped_acquire acquire;
        ThrowStatus(graph.status());
      }
      json = cli::SummaryToJson(cli::SummarizeModel(**graph, path));
    }
  }
  return JsonToPython(json);
}

}  // namespace

py::object JsonToPython(const nlohmann::json& json) {
  return py::module_::import("json").attr("loads")(qtune::DumpJson(json));
}

void BindInspect(py::module_& module) {
  module.def("inspect", &Inspect, py::arg("path"), py::arg("verify") = true,
             "What `qtune inspect PATH --json` prints: an ONNX model's inputs, outputs, "
             "opsets, op histogram and parameters, or a checkpoint's (.qtc) manifest. "
             "verify=False skips a checkpoint's .sha256 check.");
}

}  // namespace qtune::python
