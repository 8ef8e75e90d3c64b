#include "run_values.h"

#include <cstring>

#include "errors.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

// A copy of `value` as an owned tensor (the borrowed array does not outlive this call).
Tensor OwnedTensor(const std::string& name, const py::handle& value) {
  BorrowedInput borrowed = BorrowArray(name, value);
  return borrowed.tensor.Clone();
}

// ONNX's element type names where they differ from qtune's.
std::string OnnxElementName(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return "float";
    case DataType::kFloat64:
      return "double";
    default:
      return std::string(DataTypeName(dtype));
  }
}

}  // namespace

bool NeedsRunValues(const ir::Graph& graph) {
  for (const ir::Value* value : graph.inputs()) {
    if (!value->type().is_tensor()) return true;
  }
  for (const ir::Value* value : graph.outputs()) {
    if (!value->type().is_tensor()) return true;
  }
  return false;
}

RunValue ToRunValue(const ir::Value& input, const py::handle& value) {
  const ir::TensorType& type = input.type();
  const bool optional = type.kind == ir::ValueKind::kOptional;
  const bool sequence = type.kind == ir::ValueKind::kSequence ||
                        (optional && type.optional_of == ir::ValueKind::kSequence);
  if (value.is_none()) {
    if (optional) return RunValue::None();
    ThrowStatus(InvalidArgumentError("input '" + input.name() + "' is " + OnnxTypeString(type) +
                                     "; None fits only an optional"));
  }
  if (!sequence) return RunValue::Of(OwnedTensor(input.name(), value));
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value)) {
    ThrowStatus(InvalidArgumentError("input '" + input.name() + "' is " + OnnxTypeString(type) +
                                     ": pass a list of arrays"));
  }
  std::vector<Tensor> elements;
  for (const py::handle& item : value) {
    elements.push_back(
        OwnedTensor(input.name() + "[" + std::to_string(elements.size()) + "]", item));
  }
  return RunValue::Sequence(type.dtype, std::move(elements));
}

py::object FromRunValue(const RunValue& value) {
  if (value.is_none()) return py::none();
  if (value.is_sequence()) {
    py::list list;
    for (const Tensor& element : value.sequence()) list.append(TensorToArray(element));
    return list;
  }
  return TensorToArray(value.tensor());
}

std::string OnnxTypeString(const ir::TensorType& type) {
  const std::string tensor = "tensor(" + OnnxElementName(type.dtype) + ")";
  switch (type.kind) {
    case ir::ValueKind::kTensor:
      return tensor;
    case ir::ValueKind::kSequence:
      return "seq(" + tensor + ")";
    case ir::ValueKind::kOptional:
      return "optional(" +
             (type.optional_of == ir::ValueKind::kSequence ? "seq(" + tensor + ")" : tensor) + ")";
  }
  return tensor;
}

}  // namespace qtune::python
