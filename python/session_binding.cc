// qtune.Session(path, threads=1, optimize=True): .run({name: ndarray}) -> {name: ndarray},
// .inputs and .outputs (name, dtype, shape with None for unknown dimensions). Also
// qtune.load_tuned, which returns a Session running a tuned checkpoint. _value_info and
// _model_meta serve qtune.InferenceSession (python/qtune/_session.py).
#include "session_binding.h"

#include <pybind11/stl.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/tensor_args.h"
#include "errors.h"
#include "inspect_binding.h"
#include "ir/graph.h"
#include "ir/onnx_io.h"
#include "run_values.h"
#include "runtime/benchmark.h"
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
  PySession(std::unique_ptr<ir::Graph> graph, std::unique_ptr<runtime::Session> session,
            std::string model_path, int threads)
      : graph_(std::move(graph)),
        session_(std::move(session)),
        model_path_(std::move(model_path)),
        threads_(threads) {}

  // `model`: a path (str or os.PathLike) or the serialized model (bytes), as ONNX Runtime's
  // InferenceSession takes. Bytes cannot refer to external data files.
  // `optimize` false: no pass pipeline and no fusions (ONNX Runtime's ORT_DISABLE_ALL).
  static std::unique_ptr<PySession> Open(const py::object& model, int threads, bool optimize) {
    if (threads < 1) {
      ThrowStatus(Status(StatusCode::kInvalidArgument,
                         "threads must be at least 1, got " + std::to_string(threads)));
    }
    std::unique_ptr<ir::Graph> graph;
    std::string path;
    if (py::isinstance<py::bytes>(model)) {
      const std::string bytes = model.cast<std::string>();
      path = "<bytes>";
      graph = ValueOrThrow(ir::ParseModel(bytes, "model bytes", ir::LoadOptions{}));
    } else {
      path = py::str(py::module_::import("os").attr("fspath")(model)).cast<std::string>();
      graph = ValueOrThrow(ir::LoadModel(path));
    }
    runtime::SessionOptions options;
    options.threads = threads;
    // As `qtune run`: adaptive unless QTUNE_THREAD_POLICY says fixed (docs/run.md, Threads).
    options.thread_policy = ValueOrThrow(runtime::ThreadPolicyFromEnvironment());
    options.optimize = optimize;
    auto session = ValueOrThrow(runtime::Session::Create(*graph, options));
    return std::make_unique<PySession>(std::move(graph), std::move(session), path, threads);
  }

  static std::unique_ptr<PySession> LoadTuned(const std::string& model_path,
                                              const std::string& checkpoint, bool verify) {
    std::unique_ptr<ir::Graph> graph = ValueOrThrow(ir::LoadModel(model_path));
    tune::LoadTunedOptions options;
    options.verify = verify;
    auto tuned = ValueOrThrow(tune::LoadTunedSession(*graph, checkpoint, options));
    return std::make_unique<PySession>(std::move(graph), std::move(tuned.session), model_path,
                                       tuned.threads);
  }

  py::dict Run(const py::dict& feeds) {
    if (NeedsRunValues(*graph_)) return RunWithValues(feeds);
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

  // The timing loop of `qtune bench` on seeded random inputs; the keys of `bench --json`
  // that apply to a Session (model, threads, iters, warmup, median/p90/min ms, compile_ms,
  // steps). `shapes` gives sizes for inputs with free dimensions.
  py::object Bench(int iters, int warmup, const std::map<std::string, std::vector<int64_t>>& shapes,
                   uint64_t seed) {
    if (iters < 1 || warmup < 0) {
      ThrowStatus(Status(StatusCode::kInvalidArgument,
                         "bench(): iters must be >= 1 and warmup >= 0, got " +
                             std::to_string(iters) + " and " + std::to_string(warmup)));
    }
    nlohmann::json j;
    {
      py::gil_scoped_release release;
      Status status = [&]() -> Status {
        ASSIGN_OR_RETURN(auto sizes, cli::ResolveInputSizes(*graph_, shapes));
        ASSIGN_OR_RETURN(runtime::NamedTensors inputs, cli::RandomInputs(*graph_, sizes, seed));
        const auto start = std::chrono::steady_clock::now();
        ASSIGN_OR_RETURN(auto plan, session_->Prepare(sizes));
        const double compile_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        ASSIGN_OR_RETURN(
            runtime::LatencyStats stats,
            runtime::MeasureLatency(*session_, inputs, {.warmup = warmup, .iters = iters}));
        j = {{"model", model_path_},
             {"threads", threads_},
             {"iters", iters},
             {"warmup", warmup},
             {"median_ms", stats.median_ms},
             {"p90_ms", stats.p90_ms},
             {"min_ms", stats.min_ms},
             {"compile_ms", compile_ms},
             {"steps", plan->steps.size()}};
        return Status();
      }();
      if (!status.ok()) {
        py::gil_scoped_acquire acquire;
        ThrowStatus(status);
      }
    }
    return JsonToPython(j);
  }

  // Models with sequence or optional inputs or outputs: a list of arrays for a sequence,
  // None for an empty optional, on either side.
  py::dict RunWithValues(const py::dict& feeds) {
    runtime::NamedValues inputs;
    for (const auto& [key, value] : feeds) {
      const std::string name = py::str(key).cast<std::string>();
      const ir::Value* input = graph_->FindValue(name);
      if (input == nullptr || !input->is_graph_input()) {
        // Session::RunValues names the inputs the model has.
        inputs.emplace_back(name, RunValue::Of(BorrowArray(name, value).tensor.Clone()));
      } else {
        inputs.emplace_back(name, ToRunValue(*input, value));
      }
    }
    StatusOr<runtime::NamedValues> outputs = [&] {
      py::gil_scoped_release release;
      return session_->RunValues(inputs);
    }();
    ThrowIfError(outputs.status());
    py::dict result;
    for (const auto& [name, value] : *outputs) result[py::str(name)] = FromRunValue(value);
    return result;
  }

  // [(name, ONNX type string, shape)] as ONNX Runtime's NodeArg has them: a dimension is an
  // int, its symbol or None; the shape is [] when even the rank is unknown.
  py::list ValueInfo(bool outputs) const {
    py::list list;
    for (const ir::Value* value : outputs ? graph_->outputs() : graph_->inputs()) {
      py::list shape;
      if (value->type().shape) {
        for (const Dim& dim : value->type().shape->dims()) {
          if (dim.is_known())
            shape.append(dim.value);
          else if (!dim.symbol.empty())
            shape.append(dim.symbol);
          else
            shape.append(py::none());
        }
      }
      list.append(py::make_tuple(value->name(), OnnxTypeString(value->type()), shape));
    }
    return list;
  }

  // The ModelProto fields ONNX Runtime's ModelMetadata has.
  py::dict ModelMeta() const {
    const ir::ModelInfo& info = graph_->info();
    py::dict meta;
    meta["producer_name"] = info.producer_name;
    meta["graph_name"] = info.graph_name;
    meta["domain"] = info.domain;
    meta["description"] = info.doc_string;
    meta["graph_description"] = "";  // qtune does not keep the GraphProto doc_string
    meta["version"] = info.model_version;
    py::dict custom;
    for (const auto& [key, value] : info.metadata_props) custom[py::str(key)] = value;
    meta["custom_metadata_map"] = custom;
    return meta;
  }

  int threads() const { return threads_; }

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
  std::string model_path_;
  int threads_ = 1;
};

}  // namespace

void BindSession(py::module_& module) {
  py::class_<PySession>(module, "Session",
                        "An ONNX model compiled by qtune's engine (docs/python.md).")
      .def(py::init(&PySession::Open), py::arg("model"), py::arg("threads") = 1,
           py::arg("optimize") = true,
           "Loads and prepares MODEL, a path to a .onnx file or the model's bytes; raises "
           "qtune.Error subclasses on failure. optimize=False: no pass pipeline, no fusions.")
      .def("run", &PySession::Run, py::arg("feeds"),
           "Runs the model on {input name: array}; returns {output name: array} in graph "
           "order. The GIL is released while it runs.")
      .def_property_readonly("inputs", &PySession::Inputs,
                             "[{'name', 'dtype', 'shape'}] of the graph inputs; unknown "
                             "dimensions are None, symbolic ones their name")
      .def_property_readonly("outputs", &PySession::Outputs, "like inputs, for the outputs")
      .def_property_readonly("threads", &PySession::threads, "threads the session runs with")
      .def("_value_info", &PySession::ValueInfo, py::arg("outputs"),
           "[(name, ONNX type string, shape)] for qtune.InferenceSession")
      .def("_model_meta", &PySession::ModelMeta, "ModelProto fields for get_modelmeta()")
      .def("bench", &PySession::Bench, py::arg("iters") = 50, py::arg("warmup") = 5,
           py::arg("shapes") = std::map<std::string, std::vector<int64_t>>{}, py::arg("seed") = 0,
           "Times run() on seeded random inputs like `qtune bench --json`: returns "
           "{'median_ms', 'p90_ms', 'min_ms', 'compile_ms', 'steps', ...}. shapes: "
           "{input name: sizes} for inputs with free dimensions. The GIL is released.");
  module.def("load_tuned", &PySession::LoadTuned, py::arg("model"), py::arg("checkpoint"),
             py::arg("verify") = true,
             "A Session running CHECKPOINT (from `qtune tune`) on MODEL's weights "
             "(docs/tune.md).");
  module.def("load", &PySession::LoadTuned, py::arg("model"), py::arg("checkpoint"),
             py::arg("verify") = true,
             "qtune.load(model, checkpoint) -> Session: MODEL's weights with CHECKPOINT's "
             "tuned configuration (the same as load_tuned).");
}

}  // namespace qtune::python
