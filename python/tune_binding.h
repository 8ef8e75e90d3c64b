// qtune.tune(...) and qtune.autotune(...): what `qtune tune --json` and `qtune autotune
// --json` return (docs/python.md).
#pragma once

#include <pybind11/pybind11.h>

namespace qtune::python {

void BindTune(pybind11::module_& module);

}  // namespace qtune::python
