// qtune.Session: a loaded model and a runtime::Session, as Python sees them.
#pragma once

#include <pybind11/pybind11.h>

namespace qtune::python {

// Defines qtune.Session on `module`.
void BindSession(pybind11::module_& module);

}  // namespace qtune::python
