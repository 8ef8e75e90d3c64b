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
  kFloat4E2M1 = 23,  // ONNX IR 11 (opset 23): 1 sign, 2 exponent, 1 mantissa bit; max 6
  kFloat8E8M0 = 24,  // ONNX IR 11 (opset 24): a power of two 2^(e-127); 0xFF is NaN
};

// The largest DataType value qtune knows (ONNX defines more: uint2/int2 from IR 12).
inline constexpr int32_t kMaxKnownDataType = 24;

// True for every value 1..kMaxKnownDataType. Loaders reject anything else.
bool IsKnownDataType(int32_t onnx_type);
// True for the types qtune tensors can hold: everything except kUndefined and kString.
//
// The 4-bit types (kUint4, kInt4, kFloat4E2M1) are held UNPACKED in memory, one element
// per byte: int4 as an int8_t in [-8, 7], uint4 as a uint8_t in [0, 15], float4e2m1 as
// its 4-bit code (sign in bit 3) in a uint8_t. They are packed two per byte (low nibble
// first) only in files: see IsPackedInFiles / PackedByteSize and core/nibble_pack.h.
// kFloat8E8M0 is one byte, its biased exponent.
bool IsStorableDataType(DataType type);
// Size of one element in memory in bytes (1 for the 4-bit types); 0 for types without a
// fixed byte size (kUndefined, kString).
size_t DataTypeSize(DataType type);
// True for kUint4, kInt4 and kFloat4E2M1: ONNX stores them two per byte.
bool IsPackedInFiles(DataType type);
// Bytes that `num_elements` elements of `type` take in an ONNX file: ceil(n / 2) for
// the packed types, n * DataTypeSize(type) otherwise.
int64_t PackedByteSize(DataType type, int64_t num_elements);
// ONNX spelling, e.g. "float32", "int8", "float8e4m3fn"; "undefined" for unknown values.
std::string_view DataTypeName(DataType type);
StatusOr<DataType> ParseDataType(std::string_view name);
bool IsFloatingPoint(DataType type);  // f16, bf16, f32, f64, the float8 and float4 types
bool IsInteger(DataType type);        // signed and unsigned integers, not bool
// uint8 or int8: the types of 8-bit quantized tensors.
inline bool IsInt8OrUint8(DataType type) {
  return type == DataType::kInt8 || type == DataType::kUint8;
}

}  // namespace qtune
