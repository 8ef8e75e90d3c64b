// Python objects <-> runtime::RunValue for models whose inputs or outputs are sequences or
// optionals (runtime::Session::RunValues): a sequence is a Python list of arrays, an empty
// optional is None, a tensor (or an optional holding one) is an array.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "core/run_value.h"
#include "ir/graph.h"
#include "tensor_convert.h"

namespace qtune::python {

// True when a graph input or output is not a plain tensor (Session::Run refuses those).
bool NeedsRunValues(const ir::Graph& graph);

// `value` for graph input `input`: an array, a list of arrays (a sequence input) or None
// (an empty optional). The arrays are copied into owned tensors (sequences are rare and
// small; the plain-tensor path borrows). Raises qtune.InvalidArgument naming the input.
RunValue ToRunValue(const ir::Value& input, const pybind11::handle& value);

// An array, a list of arrays or None.
pybind11::object FromRunValue(const RunValue& value);

// ONNX Runtime's type string of a graph value: "tensor(float)", "seq(tensor(int64))",
// "optional(tensor(float))".
std::string OnnxTypeString(const ir::TensorType& type);

}  // namespace qtune::python
