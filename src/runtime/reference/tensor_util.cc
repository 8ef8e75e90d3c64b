#include "runtime/reference/tensor_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/float_convert.h"
#include "core/shape.h"

namespace qtune::runtime::reference {
namespace {

template <typename T>
T Read(const Tensor& t, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const std::byte*>(t.raw_data()) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void Write(Tensor& t, int64_t i, T v) {
  std::memcpy(static_cast<std::byte*>(t.raw_data()) + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

Status NodeError(const ir::Node& node, std::string_view message) {
  return InvalidArgumentError(node.DebugName() + ": " + std::string(message));
}

Status NodeUnimplemented(const ir::Node& node, std::string_view message) {
  return UnimplementedError(node.DebugName() + ": " + std::string(message));
}

Status UnsupportedType(const ir::Node& node, DataType type, std::string_view what) {
  return NodeUnimplemented(node, std::string(what) + " of type " + std::string(DataTypeName(type)) +
                                     " is not supported by the reference kernel");
}

bool HasInput(const KernelArgs& args, size_t i) {
  return i < args.inputs.size() && args.inputs[i].is_valid();
}

Status CheckInputCount(const KernelArgs& args, size_t min_count, size_t max_count) {
  size_t n = args.inputs.size();
  if (n < min_count || n > max_count) {
    std::string expected = min_count == max_count
                               ? std::to_string(min_count)
                               : std::to_string(min_count) + " to " + std::to_string(max_count);
    return NodeError(args.node, "expects " + expected + " inputs but has " + std::to_string(n));
  }
  for (size_t i = 0; i < min_count; ++i) {
    if (!args.inputs[i].is_valid()) {
      return NodeError(args.node, "required input " + std::to_string(i) + " is missing");
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> ReadIndices(const ir::Node& node, const Tensor& t,
                                           std::string_view what) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(t.num_elements()));
  if (t.dtype() == DataType::kInt64) {
    for (int64_t v : t.span<int64_t>()) out.push_back(v);
  } else if (t.dtype() == DataType::kInt32) {
    for (int32_t v : t.span<int32_t>()) out.push_back(v);
  } else {
    return NodeError(node, std::string(what) + " must be int64 or int32, not " +
                               std::string(DataTypeName(t.dtype())));
  }
  return out;
}

StatusOr<int64_t> ReadIndexScalar(const ir::Node& node, const Tensor& t, std::string_view what) {
  ASSIGN_OR_RETURN(std::vector<int64_t> values, ReadIndices(node, t, what));
  if (values.size() != 1) {
    return NodeError(
        node, std::string(what) + " must hold one element, not " + std::to_string(values.size()));
  }
  return values[0];
}

StatusOr<double> ReadScalarAsDouble(const ir::Node& node, const Tensor& t, std::string_view what) {
  if (t.num_elements() != 1) {
    return NodeError(node, std::string(what) + " must hold one element, not " +
                               std::to_string(t.num_elements()));
  }
  return LoadAsDouble(t, 0);
}

StatusOr<int64_t> NormalizeAxis(const ir::Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return NodeError(
        node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

StatusOr<std::vector<int64_t>> NormalizeAxes(const ir::Node& node, std::vector<int64_t> axes,
                                             int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& axis : axes) {
    ASSIGN_OR_RETURN(axis, NormalizeAxis(node, axis, rank));
    if (seen[axis]) return NodeError(node, "axis " + std::to_string(axis) + " is repeated");
    seen[axis] = true;
  }
  return axes;
}

std::string Bracketed(const std::vector<int64_t>& sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i > 0 ? "," : "") + std::to_string(sizes[i]);
  return out + "]";
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
  return strides;
}

void CopyElement(void* dst, int64_t dst_index, const void* src, int64_t src_index,
                 size_t element_size) {
  auto* d = static_cast<std::byte*>(dst) + dst_index * static_cast<int64_t>(element_size);
  const auto* s =
      static_cast<const std::byte*>(src) + src_index * static_cast<int64_t>(element_size);
  switch (element_size) {
    case 1:
      *d = *s;
      break;
    case 2:
      std::memcpy(d, s, 2);
      break;
    case 4:
      std::memcpy(d, s, 4);
      break;
    case 8:
      std::memcpy(d, s, 8);
      break;
    default:
      std::memcpy(d, s, element_size);
      break;
  }
}

bool IsNarrowFloat(DataType type) {
  switch (type) {
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      return true;
    default:
      return false;
  }
}

double LoadAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return Read<float>(t, i);
    case DataType::kFloat64:
      return Read<double>(t, i);
    case DataType::kInt8:
      return Read<int8_t>(t, i);
    case DataType::kInt16:
      return Read<int16_t>(t, i);
    case DataType::kInt32:
      return Read<int32_t>(t, i);
    case DataType::kInt64:
      return static_cast<double>(Read<int64_t>(t, i));
    case DataType::kUint8:
      return Read<uint8_t>(t, i);
    case DataType::kUint16:
      return Read<uint16_t>(t, i);
    case DataType::kUint32:
      return Read<uint32_t>(t, i);
    case DataType::kUint64:
      return static_cast<double>(Read<uint64_t>(t, i));
    case DataType::kBool:
      return Read<uint8_t>(t, i) != 0 ? 1.0 : 0.0;
    case DataType::kFloat16:
      return HalfToFloat(Read<uint16_t>(t, i));
    case DataType::kBfloat16:
      return Bfloat16ToFloat(Read<uint16_t>(t, i));
    case DataType::kFloat8E4M3FN:
      return Float8E4M3FNToFloat(Read<uint8_t>(t, i));
    case DataType::kFloat8E5M2:
      return Float8E5M2ToFloat(Read<uint8_t>(t, i));
    case DataType::kInt4:  // held unpacked, one per byte (core/dtype.h)
      return Read<int8_t>(t, i);
    case DataType::kUint4:
      return Read<uint8_t>(t, i);
    case DataType::kFloat4E2M1:
      return Float4E2M1ToFloat(Read<uint8_t>(t, i));
    case DataType::kFloat8E8M0:
      return Float8E8M0ToFloat(Read<uint8_t>(t, i));
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

void StoreFromDouble(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      Write<float>(t, i, static_cast<float>(v));
      break;
    case DataType::kFloat64:
      Write<double>(t, i, v);
      break;
    case DataType::kInt8:
      Write(t, i, SaturateCast<int8_t>(v));
      break;
    case DataType::kInt16:
      Write(t, i, SaturateCast<int16_t>(v));
      break;
    case DataType::kInt32:
      Write(t, i, SaturateCast<int32_t>(v));
      break;
    case DataType::kInt64:
      Write(t, i, SaturateCast<int64_t>(v));
      break;
    case DataType::kUint8:
      Write(t, i, SaturateCast<uint8_t>(v));
      break;
    case DataType::kUint16:
      Write(t, i, SaturateCast<uint16_t>(v));
      break;
    case DataType::kUint32:
      Write(t, i, SaturateCast<uint32_t>(v));
      break;
    case DataType::kUint64:
      Write(t, i, SaturateCast<uint64_t>(v));
      break;
    case DataType::kBool:
      Write<uint8_t>(t, i, v != 0 ? 1 : 0);
      break;
    case DataType::kFloat16:
      Write(t, i, FloatToHalf(static_cast<float>(v)));
      break;
    case DataType::kBfloat16:
      Write(t, i, FloatToBfloat16(static_cast<float>(v)));
      break;
    case DataType::kFloat8E4M3FN:
      Write(t, i, FloatToFloat8E4M3FN(static_cast<float>(v)));
      break;
    case DataType::kFloat8E5M2:
      Write(t, i, FloatToFloat8E5M2(static_cast<float>(v)));
      break;
    case DataType::kInt4:
      Write(t, i, static_cast<int8_t>(std::clamp<double>(SaturateCast<int8_t>(v), -8, 7)));
      break;
    case DataType::kUint4:
      Write(t, i, static_cast<uint8_t>(std::min<double>(SaturateCast<uint8_t>(v), 15)));
      break;
    case DataType::kFloat4E2M1:
      Write(t, i, FloatToFloat4E2M1(static_cast<float>(v)));
      break;
    case DataType::kFloat8E8M0:
      Write(t, i, FloatToFloat8E8M0(static_cast<float>(v)));
      break;
    default:
      break;
  }
}

StatusOr<Tensor> ToFloat32(const Tensor& t) {
  if (t.dtype() == DataType::kFloat8E4M3FNUZ || t.dtype() == DataType::kFloat8E5M2FNUZ) {
    return UnimplementedError("reference kernels do not support " +
                              std::string(DataTypeName(t.dtype())));
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DataType::kFloat32, t.sizes()));
  float* o = out.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) o[i] = static_cast<float>(LoadAsDouble(t, i));
  return out;
}

StatusOr<Tensor> FromFloat32(const Tensor& t, DataType type) {
  QTUNE_CHECK(t.dtype() == DataType::kFloat32);
  if (type == DataType::kFloat8E4M3FNUZ || type == DataType::kFloat8E5M2FNUZ) {
    return UnimplementedError("reference kernels do not support " +
                              std::string(DataTypeName(type)));
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(type, t.sizes()));
  const float* in = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) StoreFromDouble(out, i, in[i]);
  return out;
}

StatusOr<Tensor> FilledTensor(DataType type, std::vector<int64_t> sizes, double v) {
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(type, std::move(sizes)));
  for (int64_t i = 0; i < out.num_elements(); ++i) StoreFromDouble(out, i, v);
  return out;
}

}  // namespace qtune::runtime::reference
