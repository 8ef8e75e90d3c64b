// qtune.Session(path, threads=1): .run({name: ndarray}) -> {name: ndarray}, .inputs and
// .outputs (name, dtype, shape with None for unknown dimensions). Also qtune.load_tuned,
// which returns a Session running a tuned checkpoint.
#include "session_binding.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "errors.h"
#include "ir/graph.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "tensor_convert.h"
#include "tune/tune.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

// The model graph and a session over it. Run() releases the GIL; runtime::Session
// serializes calls on one session, so separate sessions run in parallel from threads.
class PySession {
 public:
  PySession(std::unique_ptr<ir::Graph> graph, std::unique_ptr<runtime::Session> session)
      : graph_(std::move(graph)), session_(std::move(session)) {}

  static std::unique_ptr<PySession> Open(const std::string& path, int threads) {
    if (threads < 1) {
      ThrowStatus(Status(StatusCode::kInvalidArgument,
                         "threads must be at least 1, got " + std::to_string(threads)));
    }
    std::unique_ptr<ir::Graph> graph = ValueOrThrow(ir::LoadModel(path));
    runtime::SessionOptions options;
    options.threads = threads;
    auto session = ValueOrThrow(runtime::Session::Create(*graph, options));
    return std::make_unique<PySession>(std::move(graph), std::move(session));
  }

  static std::unique_ptr<PySession> LoadTuned(const std::string& model_path,
                                              const std::string& checkpoint, bool verify) {
    std::unique_ptr<ir::Graph> graph = ValueOrThrow(ir::LoadModel(model_path));
    tune::LoadTunedOptions options;
    options.verify = verify;
    auto session = ValueOrThrow(tune::LoadTuned(*graph, checkpoint, options));
    return std::make_unique<PySession>(std::move(graph), std::move(session));
  }

  py::dict Run(const py::dict& feeds) {
    std::vector<BorrowedInput> borrowed;  // keeps the arrays alive through Run
    borrowed.reserve(feeds.size());
    runtime::NamedTensors inputs;
    for (const auto& [key, value] : feeds) {
      if (!py::isinstance<py::str>(key)) {
        ThrowStatus(Status(StatusCode::kInvalidArgument, "run(): input names must be strings"));
      }
      const std::string name = key.cast<std::string>();
      borrowed.push_back(BorrowArray(name, value));
      inputs.emplace_back(name, borrowed.back().tensor);
    }
    StatusOr<runtime::NamedTensors> outputs = [&] {
      py::gil_scoped_release release;
      return session_->Run(inputs);
    }();
    ThrowIfError(outputs.status());
    py::dict result;
    for (const auto& [name, tensor] : *outputs) result[py::str(name)] = TensorToArray(tensor);
    return result;
  }

  py::list Inputs() const { return Describe(graph_->inputs()); }
  py::list Outputs() const { return Describe(graph_->outputs()); }

 private:
  static py::list Describe(const std::vector<ir::Value*>& values) {
    py::list list;
    for (const ir::Value* value : values) {
      py::dict entry;
      entry["name"] = value->name();
      entry["dtype"] = DataTypeString(value->dtype());
      if (value->type().shape) {
        py::list shape;
        for (const Dim& dim : value->type().shape->dims()) {
          if (dim.is_known())
            shape.append(dim.value);
          else if (!dim.symbol.empty())
            shape.append(dim.symbol);
          else
            shape.append(py::none());
        }
        entry["shape"] = py::tuple(shape);
      } else {
        entry["shape"] = py::none();
      }
      list.append(entry);
    }
    return list;
  }

  std::unique_ptr<ir::Graph> graph_;
  std::unique_ptr<runtime::Session> session_;
};

}  // namespace

void BindSession(py::module_& module) {
  py::class_<PySession>(module, "Session",
                        "An ONNX model compiled by qtune's engine (docs/python.md).")
      .def(py::init(&PySession::Open), py::arg("model_path"), py::arg("threads") = 1,
           "Loads and prepares MODEL_PATH (.onnx); raises qtune.Error subclasses on failure.")
      .def("run", &PySession::Run, py::arg("feeds"),
           "Runs the model on {input name: array}; returns {output name: array} in graph "
           "order. The GIL is released while it runs.")
      .def_property_readonly("inputs", &PySession::Inputs,
                             "[{'name', 'dtype', 'shape'}] of the graph inputs; unknown "
                             "dimensions are None, symbolic ones their name")
      .def_property_readonly("outputs", &PySession::Outputs, "like inputs, for the outputs");
  module.def("load_tuned", &PySession::LoadTuned, py::arg("model"), py::arg("checkpoint"),
             py::arg("verify") = true,
             "A Session running CHECKPOINT (from `qtune tune`) on MODEL's weights "
             "(docs/tune.md).");
}

}  // namespace qtune::python
