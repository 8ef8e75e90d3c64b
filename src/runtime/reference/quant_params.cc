// Type rules and scale layouts of QuantizeLinear / DequantizeLinear (contract:
// quant_kernels.h), following the ONNX operator versions 10, 13, 19, 21, 23 and 24:
// float4e2m1 values from 23, float8e8m0 scales from 24.
#include <algorithm>
#include <initializer_list>
#include <string>

#include "runtime/reference/quant_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::quant {
namespace {

using reference::Bracketed;
using reference::NodeError;
using reference::NodeUnimplemented;

std::string TypeName(DataType type) { return std::string(DataTypeName(type)); }

bool OneOf(DataType type, std::initializer_list<DataType> types) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

bool IsFloat8(DataType type) {
  return OneOf(type, {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                      DataType::kFloat8E5M2FNUZ});
}

// The quantized types (Q's output, DQ's input) ONNX allows at `opset`.
bool IsQuantizedTypeAllowed(DataType type, int64_t opset) {
  if (OneOf(type, {DataType::kUint8, DataType::kInt8})) return true;
  if (opset >= 19 && IsFloat8(type)) return true;
  if (opset >= 23 && type == DataType::kFloat4E2M1) return true;
  return opset >= 21 &&
         OneOf(type, {DataType::kUint16, DataType::kInt16, DataType::kUint4, DataType::kInt4});
}

const char* QuantizedTypesAllowed() {
  return " (uint8, int8; float8 from 19; int16, uint16, int4, uint4 from 21; float4e2m1 from "
         "23)";
}

// Unimplemented for allowed types that qtune's float conversions cannot handle.
Status CheckQuantizedTypeSupported(const ir::Node& node, DataType type, const char* what) {
  if (type == DataType::kFloat8E4M3FNUZ || type == DataType::kFloat8E5M2FNUZ) {
    return NodeUnimplemented(node, std::string(what) + " is " + TypeName(type) +
                                       ": the FNUZ float8 types are not supported");
  }
  return Status::Ok();
}

// Float scale types: float32 before opset 19, then also float16 and bfloat16, and
// float8e8m0 (powers of two, the MX formats' scales) from 24.
bool IsScaleTypeAllowed(DataType type, int64_t opset) {
  if (type == DataType::kFloat32) return true;
  if (opset >= 24 && type == DataType::kFloat8E8M0) return true;
  return opset >= 19 && OneOf(type, {DataType::kFloat16, DataType::kBfloat16});
}

std::string ScaleTypesAllowed(int64_t opset) {
  return std::string("; opset ") + std::to_string(opset) + " allows float32" +
         (opset >= 19 ? ", float16, bfloat16" : "") + (opset >= 24 ? ", float8e8m0" : "") +
         (opset < 24 ? " (float8e8m0 from opset 24)" : "");
}

// The float types DequantizeLinear can output.
bool IsDequantizedType(DataType type) {
  return OneOf(type, {DataType::kFloat32, DataType::kFloat16, DataType::kBfloat16});
}

Status CheckAttributeOpset(const ir::Node& node, int64_t opset, const char* attribute,
                           int64_t since) {
  if (opset < since && node.HasAttribute(attribute)) {
    return NodeError(node, std::string("attribute '") + attribute + "' needs opset " +
                               std::to_string(since) + " or later; the graph imports opset " +
                               std::to_string(opset));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<DataType> QuantizeOutputType(const ir::Node& node, int64_t opset, DataType x,
                                      DataType scale, DataType zero_point) {
  RETURN_IF_ERROR(CheckAttributeOpset(node, opset, "saturate", 19));
  RETURN_IF_ERROR(CheckAttributeOpset(node, opset, "output_dtype", 21));
  const bool x_ok = OneOf(x, {DataType::kFloat32, DataType::kInt32}) ||
                    (opset >= 19 && OneOf(x, {DataType::kFloat16, DataType::kBfloat16}));
  if (!x_ok)
    return NodeError(node, "x is " + TypeName(x) + "; opset " + std::to_string(opset) +
                               " quantizes float32, int32" +
                               (opset >= 19 ? ", float16 and bfloat16" : ""));
  if (opset >= 19 && opset < 21) {
    // Version 19: x and y_scale share one type.
    if (scale != x) {
      return NodeError(node, "y_scale is " + TypeName(scale) + " but x is " + TypeName(x) +
                                 "; opset 19 requires one type for both");
    }
  } else if (!(IsScaleTypeAllowed(scale, opset) || (opset >= 21 && scale == DataType::kInt32))) {
    return NodeError(node, "y_scale is " + TypeName(scale) + ScaleTypesAllowed(opset) +
                               (opset >= 21 ? ", int32" : ""));
  }
  DataType y = zero_point != DataType::kUndefined ? zero_point : DataType::kUint8;
  const int64_t output_dtype = opset >= 21 ? node.GetInt("output_dtype", 0) : 0;
  if (output_dtype != 0) {
    if (!IsKnownDataType(static_cast<int32_t>(output_dtype))) {
      return NodeError(
          node, "output_dtype " + std::to_string(output_dtype) + " is not an ONNX data type");
    }
    const auto requested = static_cast<DataType>(output_dtype);
    if (zero_point != DataType::kUndefined && zero_point != requested) {
      return NodeError(node, "output_dtype is " + TypeName(requested) + " but y_zero_point is " +
                                 TypeName(zero_point) + "; they must agree");
    }
    y = requested;
  }
  if (!IsQuantizedTypeAllowed(y, opset)) {
    return NodeError(node, "the output type " + TypeName(y) + " is not allowed at opset " +
                               std::to_string(opset) + QuantizedTypesAllowed());
  }
  RETURN_IF_ERROR(CheckQuantizedTypeSupported(node, y, "the output type"));
  return y;
}

StatusOr<DataType> DequantizeOutputType(const ir::Node& node, int64_t opset, DataType x,
                                        DataType scale, DataType zero_point) {
  if (!IsQuantizedTypeAllowed(x, opset) && x != DataType::kInt32) {
    return NodeError(node, "x is " + TypeName(x) + "; opset " + std::to_string(opset) +
                               " dequantizes int32 and" + QuantizedTypesAllowed());
  }
  RETURN_IF_ERROR(CheckQuantizedTypeSupported(node, x, "x"));
  if (zero_point != DataType::kUndefined && zero_point != x) {
    return NodeError(node, "x_zero_point is " + TypeName(zero_point) + " but x is " + TypeName(x) +
                               "; they must have one type");
  }
  if (!IsScaleTypeAllowed(scale, opset)) {
    return NodeError(node, "x_scale is " + TypeName(scale) + ScaleTypesAllowed(opset));
  }
  const int64_t output_dtype = opset >= 23 ? node.GetInt("output_dtype", 0) : 0;
  if (output_dtype != 0) {
    const auto requested = static_cast<DataType>(output_dtype);
    if (!IsKnownDataType(static_cast<int32_t>(output_dtype)) || !IsDequantizedType(requested)) {
      return NodeError(node, "output_dtype " + std::to_string(output_dtype) +
                                 " is not float32 (1), float16 (10) or bfloat16 (16)");
    }
    return requested;
  }
  if (scale == DataType::kFloat8E8M0) {
    return NodeError(node,
                     "x_scale is float8e8m0, which is no output type: set output_dtype (float32 "
                     "= 1, float16 = 10 or bfloat16 = 16)");
  }
  return opset >= 19 ? scale : DataType::kFloat32;
}

StatusOr<ParamLayout> ResolveParamLayout(const ir::Node& node, int64_t opset,
                                         const std::vector<int64_t>& x_sizes,
                                         const std::vector<int64_t>& scale_sizes,
                                         const std::vector<int64_t>* zero_point_sizes) {
  RETURN_IF_ERROR(CheckAttributeOpset(node, opset, "axis", 13));
  RETURN_IF_ERROR(CheckAttributeOpset(node, opset, "block_size", 21));
  int64_t scale_count = 1;
  for (int64_t d : scale_sizes) scale_count *= d;
  if (zero_point_sizes != nullptr && *zero_point_sizes != scale_sizes) {
    int64_t zp_count = 1;
    for (int64_t d : *zero_point_sizes) zp_count *= d;
    // A scalar against a one-element 1-D tensor is the same per-tensor parameter.
    if (!(zp_count == 1 && scale_count == 1 && zero_point_sizes->size() <= 1 &&
          scale_sizes.size() <= 1)) {
      return NodeError(node, "the scale is " + Bracketed(scale_sizes) + " but the zero point is " +
                                 Bracketed(*zero_point_sizes) + "; they must have equal sizes");
    }
  }
  const int64_t block = opset >= 21 ? node.GetInt("block_size", 0) : 0;
  if (block < 0) return NodeError(node, "block_size " + std::to_string(block) + " is negative");
  ParamLayout layout;
  if (block == 0 && scale_count == 1 && scale_sizes.size() <= 1) return layout;  // per tensor
  if (opset < 13) {
    return NodeError(node, "the scale is " + Bracketed(scale_sizes) + "; opset " +
                               std::to_string(opset) + " allows only a per-tensor scale");
  }
  const int64_t rank = static_cast<int64_t>(x_sizes.size());
  ASSIGN_OR_RETURN(int64_t axis, reference::NormalizeAxis(node, node.GetInt("axis", 1), rank));
  layout.per_tensor = false;
  layout.axis_size = x_sizes[axis];
  for (int64_t d = axis + 1; d < rank; ++d) layout.inner *= x_sizes[d];
  if (block == 0) {
    if (scale_sizes.size() != 1 || scale_sizes[0] != x_sizes[axis]) {
      return NodeError(node, "the scale is " + Bracketed(scale_sizes) + " but x is " +
                                 Bracketed(x_sizes) + "; a per-axis scale must be 1-D with " +
                                 std::to_string(x_sizes[axis]) + " elements (axis " +
                                 std::to_string(axis) + ")");
    }
    return layout;
  }
  layout.block = block;
  std::vector<int64_t> expected = x_sizes;
  expected[axis] = (x_sizes[axis] + block - 1) / block;
  if (scale_sizes != expected) {
    return NodeError(node, "the scale is " + Bracketed(scale_sizes) + " but x " +
                               Bracketed(x_sizes) + " with block_size " + std::to_string(block) +
                               " along axis " + std::to_string(axis) + " needs " +
                               Bracketed(expected));
  }
  layout.scale_axis_size = expected[axis];
  return layout;
}

}  // namespace qtune::runtime::quant
