// qtune.eval(...): what `qtune eval --json` prints (docs/eval.md).
#pragma once

#include <pybind11/pybind11.h>

namespace qtune::python {

void BindEval(pybind11::module_& module);

}  // namespace qtune::python
