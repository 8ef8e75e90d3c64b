// qtune.quantize: post-training quantization of an ONNX file, as `qtune quantize` does.
#pragma once

#include <pybind11/pybind11.h>

namespace qtune::python {

// Defines qtune.quantize on `module`.
void BindQuantize(pybind11::module_& module);

}  // namespace qtune::python
