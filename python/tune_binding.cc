// qtune.tune and qtune.autotune. Both measure in a child process (the in-process back end):
// the qtune-measure pip installs with the module, or what `qtune_binary=` or $QTUNE_BINARY
// names (measure/measure_executable.h). The GIL is released while they run; nothing is printed.
#include "tune_binding.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "autotune/autotune.h"
#include "calib_data.h"
#include "errors.h"
#include "inspect_binding.h"
#include "ir/onnx_io.h"
#include "measure/measure_executable.h"
#include "tune/tune.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

// qtune_binary=, else measure::FindMeasureExecutable's search: $QTUNE_BINARY, then the
// qtune-measure pip puts beside this extension (qtune/qtune_bin/), ... (measure_executable.h).
std::string MeasureExecutable(const std::optional<std::string>& given) {
  StatusOr<std::string> found = measure::FindMeasureExecutable(given.value_or(""));
  if (!found.ok()) ThrowStatus(found.status());
  return *found;
}

// Runs `body` (returning a JSON StatusOr) without the GIL; raises its error.
template <typename Body>
py::object RunReleased(Body body) {
  StatusOr<nlohmann::json> result = [&] {
    py::gil_scoped_release release;
    return body();
  }();
  if (!result.ok()) ThrowStatus(result.status());
  return JsonToPython(*result);
}

py::object Tune(const std::string& model_path, const py::object& calib, const std::string& output,
                const std::vector<std::string>& candidates, const std::vector<int>& threads,
                const std::string& strategy, double min_sqnr, int64_t calib_samples, int iters,
                int rounds, const std::string& autotune_dir,
                const std::optional<std::string>& qtune_binary, const std::string& work_dir,
                bool force_new) {
  tune::TuneOptions options;
  options.calib_specs = CalibSpecs(calib);
  if (!candidates.empty()) options.candidates = candidates;
  options.threads = threads;
  options.strategy = strategy;
  options.min_sqnr_db = min_sqnr;
  options.max_calib_samples = calib_samples;
  options.iters = iters;
  options.rounds = rounds;
  options.autotune_dir = autotune_dir;
  options.work_dir = work_dir;
  options.force_new = force_new;
  options.worker_executable = MeasureExecutable(qtune_binary);
  options.show_progress = true;  // to Python (log_bridge.h), not stderr
  return RunReleased([&]() -> StatusOr<nlohmann::json> {
    ASSIGN_OR_RETURN(auto model, ir::LoadModel(model_path));
    ASSIGN_OR_RETURN(tune::TuneResult result, tune::Tune(*model, options));
    RETURN_IF_ERROR(tune::SaveTuned(output, result));
    return tune::TuneResultToJson(result, model_path, output);
  });
}

py::object Autotune(const std::string& model_path, const std::string& output,
                    const py::object& calib, const std::string& work_dir, const std::string& mode,
                    int threads, double min_sqnr, int64_t calib_samples, uint64_t seed,
                    const std::optional<std::string>& qtune_binary) {
  autotune::AutotuneOptions options;
  options.model_path = model_path;
  options.output_path = output;
  options.work_dir = work_dir;
  options.calib_specs = CalibSpecs(calib);
  options.mode = mode;
  options.threads = threads;
  options.min_sqnr_db = min_sqnr;
  options.max_calib_samples = calib_samples;
  options.seed = seed;
  options.worker_executable = MeasureExecutable(qtune_binary);
  options.show_progress = true;  // to Python (log_bridge.h), not stderr
  return RunReleased([&] { return autotune::RunAutotune(options); });
}

}  // namespace

void BindTune(py::module_& module) {
  module.def(
      "tune", &Tune, py::arg("model"), py::arg("calib"), py::arg("output"),
      py::arg("candidates") = std::vector<std::string>{}, py::arg("threads") = std::vector<int>{1},
      py::arg("strategy") = "min-latency", py::arg("min_sqnr") = 20.0, py::arg("calib_samples") = 0,
      py::arg("iters") = 10, py::arg("rounds") = 3, py::arg("autotune_dir") = "",
      py::arg("qtune_binary") = py::none(), py::arg("work_dir") = "", py::arg("force_new") = false,
      "`qtune tune MODEL --calib CALIB -o OUTPUT --json`: tries each candidate at each "
      "thread count, checks it against fp32, measures it, saves the best as a "
      "checkpoint (OUTPUT and OUTPUT.sha256) and returns the result dict. candidates: "
      "default all of fp32, bf16, int8, int8-fallback, autotuned.");
  module.def("autotune", &Autotune, py::arg("model"), py::arg("output"), py::arg("calib"),
             py::arg("work_dir"), py::arg("mode") = "default", py::arg("threads") = 1,
             py::arg("min_sqnr") = 0.0, py::arg("calib_samples") = 0, py::arg("seed") = 0,
             py::arg("qtune_binary") = py::none(),
             "`qtune autotune MODEL -o OUTPUT --calib CALIB --work-dir WORK_DIR --json`: "
             "measures Q/DQ placements, writes the fastest as OUTPUT and returns the report "
             "(docs/formats/autotune-report.md); the same WORK_DIR again resumes.");
}

}  // namespace qtune::python
