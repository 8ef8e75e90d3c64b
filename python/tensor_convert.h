// numpy <-> qtune::Tensor. Inputs borrow the array's memory when it is C-contiguous and of
// a supported dtype (no copy); otherwise a C-contiguous copy is made and kept alive by the
// returned holder. Outputs are copied into new arrays that own their memory.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "core/dtype.h"
#include "core/tensor.h"

namespace qtune::python {

// An input tensor and the array whose memory it borrows; `tensor` is valid while this
// lives. Create and destroy with the GIL held.
struct BorrowedInput {
  pybind11::array array;
  Tensor tensor;
};

// `name` is the input's name, for the error (qtune.InvalidArgument on an unsupported
// dtype such as object or complex).
BorrowedInput BorrowArray(const std::string& name, const pybind11::handle& value);

pybind11::array TensorToArray(const Tensor& tensor);

// "float32", "int64", ... (numpy's spelling where it has one).
std::string DataTypeString(DataType dtype);

}  // namespace qtune::python
