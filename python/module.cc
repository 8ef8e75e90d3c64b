// The `qtune` Python module (docs/python.md): Session, load_tuned, quantize and the
// qtune.Error exception classes.
#include <pybind11/pybind11.h>

#include "errors.h"
#include "quantize_binding.h"
#include "session_binding.h"

PYBIND11_MODULE(qtune, module) {
  module.doc() = "qtune: ONNX quantization and inference (docs/python.md)";
  module.attr("__version__") = QTUNE_VERSION_STRING;
  qtune::python::RegisterErrors(module);
  qtune::python::BindSession(module);
  qtune::python::BindQuantize(module);
}
