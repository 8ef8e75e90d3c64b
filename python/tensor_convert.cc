#include "tensor_convert.h"

#include <cstring>
#include <vector>

#include "errors.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

// The numpy dtypes qtune tensors have a counterpart for.
bool ToDataType(const py::dtype& dtype, DataType* out) {
  const char kind = dtype.kind();
  const size_t size = static_cast<size_t>(dtype.itemsize());
  if (kind == 'f') {
    if (size == 4) return *out = DataType::kFloat32, true;
    if (size == 8) return *out = DataType::kFloat64, true;
    if (size == 2) return *out = DataType::kFloat16, true;
  } else if (kind == 'i') {
    if (size == 1) return *out = DataType::kInt8, true;
    if (size == 2) return *out = DataType::kInt16, true;
    if (size == 4) return *out = DataType::kInt32, true;
    if (size == 8) return *out = DataType::kInt64, true;
  } else if (kind == 'u') {
    if (size == 1) return *out = DataType::kUint8, true;
    if (size == 2) return *out = DataType::kUint16, true;
    if (size == 4) return *out = DataType::kUint32, true;
    if (size == 8) return *out = DataType::kUint64, true;
  } else if (kind == 'b') {
    return *out = DataType::kBool, true;
  }
  return false;
}

py::dtype ToNumpy(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return py::dtype("float32");
    case DataType::kFloat64:
      return py::dtype("float64");
    case DataType::kFloat16:
      return py::dtype("float16");
    case DataType::kInt8:
      return py::dtype("int8");
    case DataType::kInt16:
      return py::dtype("int16");
    case DataType::kInt32:
      return py::dtype("int32");
    case DataType::kInt64:
      return py::dtype("int64");
    case DataType::kUint8:
      return py::dtype("uint8");
    case DataType::kUint16:
      return py::dtype("uint16");
    case DataType::kUint32:
      return py::dtype("uint32");
    case DataType::kUint64:
      return py::dtype("uint64");
    case DataType::kBool:
      return py::dtype("bool");
    // bfloat16 and the float8 types have no numpy dtype: their raw bits, unsigned.
    case DataType::kBfloat16:
      return py::dtype("uint16");
    default:
      return py::dtype("uint8");
  }
}

}  // namespace

std::string DataTypeString(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBool:
      return "bool";
    default:
      return std::string(DataTypeName(dtype));
  }
}

BorrowedInput BorrowArray(const std::string& name, const py::handle& value) {
  // A C-contiguous array of its own dtype comes back as is (no copy).
  py::array array = py::array::ensure(value, py::array::c_style);
  if (!array) {
    ThrowStatus(Status(StatusCode::kInvalidArgument,
                       "input '" + name + "' is not convertible to a numpy array"));
  }
  DataType dtype;
  if (!ToDataType(array.dtype(), &dtype)) {
    ThrowStatus(Status(StatusCode::kInvalidArgument,
                       "input '" + name + "' has numpy dtype " +
                           py::str(array.dtype()).cast<std::string>() +
                           ", which qtune does not run; pass float32, an integer type or bool"));
  }
  std::vector<int64_t> sizes(array.shape(), array.shape() + array.ndim());
  // Session::Run reads its inputs and never writes them, so a read-only array is fine.
  Tensor tensor = Tensor::Borrow(dtype, std::move(sizes), const_cast<void*>(array.data()));
  return BorrowedInput{std::move(array), std::move(tensor)};
}

py::array TensorToArray(const Tensor& tensor) {
  std::vector<py::ssize_t> shape(tensor.sizes().begin(), tensor.sizes().end());
  py::array array(ToNumpy(tensor.dtype()), shape);
  if (static_cast<size_t>(array.nbytes()) != tensor.byte_size()) {
    ThrowStatus(Status(StatusCode::kUnimplemented, "output of type " +
                                                       std::string(DataTypeName(tensor.dtype())) +
                                                       " has no numpy counterpart"));
  }
  if (tensor.byte_size() > 0)
    std::memcpy(array.mutable_data(), tensor.bytes().data(), tensor.byte_size());
  return array;
}

}  // namespace qtune::python
