#include "core/dtype.h"

#include <array>

namespace qtune {
namespace {

struct TypeInfo {
  DataType type;
  std::string_view name;
  size_t size;
};

constexpr std::array<TypeInfo, kMaxKnownDataType + 1> kTypes = {{
    {DataType::kUndefined, "undefined", 0},
    {DataType::kFloat32, "float32", 4},
    {DataType::kUint8, "uint8", 1},
    {DataType::kInt8, "int8", 1},
    {DataType::kUint16, "uint16", 2},
    {DataType::kInt16, "int16", 2},
    {DataType::kInt32, "int32", 4},
    {DataType::kInt64, "int64", 8},
    {DataType::kString, "string", 0},
    {DataType::kBool, "bool", 1},
    {DataType::kFloat16, "float16", 2},
    {DataType::kFloat64, "float64", 8},
    {DataType::kUint32, "uint32", 4},
    {DataType::kUint64, "uint64", 8},
    {DataType::kComplex64, "complex64", 8},
    {DataType::kComplex128, "complex128", 16},
    {DataType::kBfloat16, "bfloat16", 2},
    {DataType::kFloat8E4M3FN, "float8e4m3fn", 1},
    {DataType::kFloat8E4M3FNUZ, "float8e4m3fnuz", 1},
    {DataType::kFloat8E5M2, "float8e5m2", 1},
    {DataType::kFloat8E5M2FNUZ, "float8e5m2fnuz", 1},
    {DataType::kUint4, "uint4", 1},  // unpacked in memory; see dtype.h
    {DataType::kInt4, "int4", 1},
    {DataType::kFloat4E2M1, "float4e2m1", 1},
    {DataType::kFloat8E8M0, "float8e8m0", 1},
}};

const TypeInfo* Find(DataType type) {
  auto i = static_cast<int32_t>(type);
  if (i < 0 || i >= static_cast<int32_t>(kTypes.size())) return nullptr;
  return &kTypes[i];
}

}  // namespace

bool IsKnownDataType(int32_t onnx_type) {
  return onnx_type >= 1 && onnx_type < static_cast<int32_t>(kTypes.size());
}

bool IsStorableDataType(DataType type) {
  const TypeInfo* info = Find(type);
  return info != nullptr && info->size > 0;
}

size_t DataTypeSize(DataType type) {
  const TypeInfo* info = Find(type);
  return info == nullptr ? 0 : info->size;
}

bool IsPackedInFiles(DataType type) {
  return type == DataType::kUint4 || type == DataType::kInt4 || type == DataType::kFloat4E2M1;
}

int64_t PackedByteSize(DataType type, int64_t num_elements) {
  if (IsPackedInFiles(type)) return num_elements / 2 + num_elements % 2;
  return num_elements * static_cast<int64_t>(DataTypeSize(type));
}

std::string_view DataTypeName(DataType type) {
  const TypeInfo* info = Find(type);
  return info == nullptr ? "undefined" : info->name;
}

StatusOr<DataType> ParseDataType(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name && info.type != DataType::kUndefined) return info.type;
  }
  if (name == "float") return DataType::kFloat32;
  if (name == "double") return DataType::kFloat64;
  if (name == "half") return DataType::kFloat16;
  return InvalidArgumentError("unknown data type '" + std::string(name) + "'");
}

bool IsFloatingPoint(DataType type) {
  switch (type) {
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1:
      return true;
    default:
      return false;
  }
}

bool IsInteger(DataType type) {
  switch (type) {
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kUint4:
    case DataType::kInt4:
      return true;
    default:
      return false;
  }
}

}  // namespace qtune
