// Element data types. The numeric values are ONNX's TensorProto.DataType values, so a
// DataType converts to and from the wire format by a cast (after IsKnownDataType()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qtune {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBfloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
};

// True for every value ONNX defines (1..22). Loaders reject anything else.
bool IsKnownDataType(int32_t onnx_type);
// True for the types qtune tensors can hold (fixed-size, byte-addressable elements):
// everything except kUndefined, kString, kUint4 and kInt4.
bool IsStorableDataType(DataType type);
// Size of one element in bytes; 0 for types without fixed byte size.
size_t DataTypeSize(DataType type);
// ONNX spelling, e.g. "float32", "int8", "float8e4m3fn"; "undefined" for unknown values.
std::string_view DataTypeName(DataType type);
StatusOr<DataType> ParseDataType(std::string_view name);
bool IsFloatingPoint(DataType type);  // f16, bf16, f32, f64, the float8 types
bool IsInteger(DataType type);        // signed and unsigned integers, not bool
// uint8 or int8: the types of 8-bit quantized tensors.
inline bool IsInt8OrUint8(DataType type) {
  return type == DataType::kInt8 || type == DataType::kUint8;
}

}  // namespace qtune
