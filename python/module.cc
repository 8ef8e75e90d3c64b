// qtune._qtune, the extension inside the `qtune` package (python/qtune/, docs/python.md):
// Session, load/load_tuned, quantize, inspect, eval, tune, autotune, the qtune.Error
// exception classes, and logging and progress through Python (set_progress_callback,
// set_log_level). The package's pure-Python part wraps it: InferenceSession, calibration
// readers, typed results.
#include <pybind11/pybind11.h>

#include "errors.h"
#include "eval_binding.h"
#include "inspect_binding.h"
#include "log_bridge.h"
#include "quantize_binding.h"
#include "session_binding.h"
#include "tune_binding.h"

PYBIND11_MODULE(_qtune, module) {
  module.doc() = "qtune: ONNX quantization and inference (docs/python.md)";
  module.attr("__version__") = QTUNE_VERSION_STRING;
  qtune::python::RegisterErrors(module);
  qtune::python::BindLogging(module);
  qtune::python::BindSession(module);
  qtune::python::BindQuantize(module);
  qtune::python::BindInspect(module);
  qtune::python::BindTune(module);
  qtune::python::BindEval(module);
}
