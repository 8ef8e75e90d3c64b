// Reference kernels for Cast and CastLike between every storable type.
//
// Rules: integer/bool to integer wraps modulo 2^bits (as C++ and numpy do); floating to
// integer truncates toward zero and saturates out-of-range values (NaN becomes 0; ONNX
// leaves these undefined); anything to bool is `v != 0`; float16/bfloat16 round to
// nearest even; float8 follows the `saturate` attribute (opset 19, default 1). Narrow
// floats convert through float32.
#include <type_traits>

#include "core/float_convert.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

template <typename D, typename S>
D ConvertElement(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != S{0};
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    return SaturateCast<D>(static_cast<double>(v));
  } else {
    return static_cast<D>(v);
  }
}

// Cast between the standard (non-narrow) types.
StatusOr<Tensor> CastStandard(const ir::Node& node, const Tensor& x, DataType to) {
  return Dispatch<kAllTypes>(node, x.dtype(), [&](auto st) -> StatusOr<Tensor> {
    using S = typename decltype(st)::type;
    return Dispatch<kAllTypes>(node, to, [&](auto dt) -> StatusOr<Tensor> {
      using D = typename decltype(dt)::type;
      ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(to, x.sizes()));
      const S* in = x.data<S>();
      D* o = out.data<D>();
      for (int64_t i = 0; i < x.num_elements(); ++i) o[i] = ConvertElement<D>(in[i]);
      return out;
    });
  });
}

StatusOr<Tensor> NarrowFromFloat32(const ir::Node& node, const Tensor& f, DataType to,
                                   bool saturate) {
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(to, f.sizes()));
  const float* in = f.data<float>();
  const int64_t n = f.num_elements();
  switch (to) {
    case DataType::kFloat16: {
      auto* o = static_cast<uint16_t*>(out.raw_data());
      for (int64_t i = 0; i < n; ++i) o[i] = FloatToHalf(in[i]);
      break;
    }
    case DataType::kBfloat16: {
      auto* o = static_cast<uint16_t*>(out.raw_data());
      for (int64_t i = 0; i < n; ++i) o[i] = FloatToBfloat16(in[i]);
      break;
    }
    case DataType::kFloat8E4M3FN: {
      auto* o = static_cast<uint8_t*>(out.raw_data());
      for (int64_t i = 0; i < n; ++i) o[i] = FloatToFloat8E4M3FN(in[i], saturate);
      break;
    }
    case DataType::kFloat8E5M2: {
      auto* o = static_cast<uint8_t*>(out.raw_data());
      for (int64_t i = 0; i < n; ++i) o[i] = FloatToFloat8E5M2(in[i], saturate);
      break;
    }
    default:
      return UnsupportedType(node, to, "output");
  }
  return out;
}

StatusOr<Tensor> CastTensor(const ir::Node& node, const Tensor& x, DataType to, bool saturate) {
  if (x.dtype() == to) return x;
  if (!IsStorableDataType(to)) return UnsupportedType(node, to, "target type");
  Tensor src = x;
  if (IsNarrowFloat(src.dtype())) {
    auto f = ToFloat32(src);
    if (!f.ok()) return f.status().WithContext(node.DebugName());
    src = std::move(f).value();
  }
  if (!IsNarrowFloat(to)) return CastStandard(node, src, to);
  ASSIGN_OR_RETURN(Tensor f, CastStandard(node, src, DataType::kFloat32));
  return NarrowFromFloat32(node, f, to, saturate);
}

Outputs Cast(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const ir::Attribute* to = a.node.FindAttribute("to");
  if (to == nullptr || to->type != ir::AttributeType::kInt) {
    return NodeError(a.node, "the integer attribute 'to' is missing");
  }
  if (!IsKnownDataType(static_cast<int32_t>(to->i))) {
    return NodeError(a.node, "'to' = " + std::to_string(to->i) + " is not an ONNX data type");
  }
  bool saturate = a.node.GetInt("saturate", 1) != 0;
  ASSIGN_OR_RETURN(Tensor out,
                   CastTensor(a.node, a.inputs[0], static_cast<DataType>(to->i), saturate));
  return std::vector<Tensor>{std::move(out)};
}

Outputs CastLike(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  bool saturate = a.node.GetInt("saturate", 1) != 0;
  ASSIGN_OR_RETURN(Tensor out, CastTensor(a.node, a.inputs[0], a.inputs[1].dtype(), saturate));
  return std::vector<Tensor>{std::move(out)};
}

}  // namespace

void RegisterCastKernels(ReferenceRegistry& r) {
  r.Register("Cast", Cast);
  r.Register("CastLike", CastLike);
}

}  // namespace qtune::runtime::reference
