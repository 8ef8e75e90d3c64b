// qtune/tensor.h: the tensors a qtune::Session takes and returns (docs/cmake.md).
//
// qtune::Tensor is a dense, row-major array of one qtune::DataType (kFloat32, kInt64,
// kUint8, ... named as ONNX names them). Its storage is owned (Tensor::Allocate, zero-filled,
// or Tensor::FromVector<T>(sizes, values)) and shared between copies, or borrowed
// (Tensor::Borrow(dtype, sizes, pointer): the caller's memory, no copy; the caller keeps it
// alive and unchanged while any Tensor refers to it). Read it with dtype(), sizes(),
// num_elements(), data<T>() (REQUIRES: sizeof(T) == DataTypeSize(dtype())), and
// DataTypeName(dtype) for its name ("float32").
//
//   qtune::Tensor image = qtune::Tensor::Borrow(qtune::DataType::kFloat32, {1, 1, 28, 28}, buf);
//
// The same type qtune uses inside (installed as qtune/internal/core/tensor.h with the
// dtype and check headers it includes); nothing is copied between the API and the engine.
#pragma once

#include "core/tensor.h"
#include "status.h"
