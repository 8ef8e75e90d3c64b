// Reference of qtune::QAdd (quant_ops.h): per element, in float32,
//   Y = QuantizeToInt(activation(DequantizeFromInt(A) + DequantizeFromInt(B)), y_scale, y_zp)
// with the shared rounding of core/quant_math.h. The fast kernel (quant_add.cc)
// evaluates the same float expression in the same order, so the two agree bit for bit.
#include <cmath>

#include "core/quant_math.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

// Per-tensor quantization parameters of one QAdd operand or of the output.
struct QuantParams {
  float scale = 1;
  int32_t zero_point = 0;
};

int32_t LoadZeroPoint(const Tensor& zp) {
  return zp.dtype() == DataType::kUint8 ? int32_t{zp.data<uint8_t>()[0]}
                                        : int32_t{zp.data<int8_t>()[0]};
}

// Reads inputs scale_index (f32 scalar, positive and finite) and scale_index + 1 (a
// scalar of type `q_type`).
StatusOr<QuantParams> ReadParams(const KernelArgs& args, size_t scale_index, DataType q_type,
                                 const char* what) {
  const ir::Node& node = args.node;
  const Tensor& scale = args.inputs[scale_index];
  const Tensor& zp = args.inputs[scale_index + 1];
  if (!scale.is_valid() || scale.dtype() != DataType::kFloat32 || scale.num_elements() != 1) {
    return InvalidArgumentError(node.DebugName() + ": " + what + " scale (input " +
                                std::to_string(scale_index) + ") must be a float32 scalar, got " +
                                (scale.is_valid() ? scale.DebugString() : "nothing"));
  }
  if (!zp.is_valid() || zp.dtype() != q_type || zp.num_elements() != 1) {
    return InvalidArgumentError(node.DebugName() + ": " + what + " zero point (input " +
                                std::to_string(scale_index + 1) + ") must be a " +
                                std::string(DataTypeName(q_type)) + " scalar, got " +
                                (zp.is_valid() ? zp.DebugString() : "nothing"));
  }
  QuantParams p{scale.data<float>()[0], LoadZeroPoint(zp)};
  if (!(p.scale > 0) || !std::isfinite(p.scale)) {
    return InvalidArgumentError(node.DebugName() + ": " + what + " scale is " +
                                std::to_string(p.scale) + "; it must be positive and finite");
  }
  return p;
}

template <typename Q>
float Dequantize(const Tensor& t, int64_t i, const QuantParams& p) {
  return DequantizeFromInt(t.data<Q>()[i], p.scale, p.zero_point);
}

float LoadReal(const Tensor& t, int64_t i, const QuantParams& p) {
  return t.dtype() == DataType::kUint8 ? Dequantize<uint8_t>(t, i, p) : Dequantize<int8_t>(t, i, p);
}

StatusOr<std::vector<Tensor>> QAddReference(const KernelArgs& args) {
  const ir::Node& node = args.node;
  if (args.inputs.size() != 8) {
    return InvalidArgumentError(node.DebugName() + ": qtune::QAdd takes 8 inputs (A, a_scale, " +
                                "a_zero_point, B, b_scale, b_zero_point, y_scale, " +
                                "y_zero_point), got " + std::to_string(args.inputs.size()));
  }
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[3];
  if (!a.is_valid() || !b.is_valid() || !IsInt8OrUint8(a.dtype()) || !IsInt8OrUint8(b.dtype()) ||
      a.sizes() != b.sizes()) {
    return InvalidArgumentError(node.DebugName() +
                                ": A and B must be uint8/int8 of equal sizes, got " +
                                (a.is_valid() ? a.DebugString() : "nothing") + " and " +
                                (b.is_valid() ? b.DebugString() : "nothing"));
  }
  const Tensor& y_zp = args.inputs[7];
  if (!y_zp.is_valid() || !IsInt8OrUint8(y_zp.dtype())) {
    return InvalidArgumentError(node.DebugName() +
                                ": y_zero_point (input 7) must be a uint8/int8 scalar");
  }
  ASSIGN_OR_RETURN(QuantParams pa, ReadParams(args, 1, a.dtype(), "A's"));
  ASSIGN_OR_RETURN(QuantParams pb, ReadParams(args, 4, b.dtype(), "B's"));
  ASSIGN_OR_RETURN(QuantParams py, ReadParams(args, 6, y_zp.dtype(), "Y's"));
  const std::string activation = node.GetString("activation", "");
  if (activation != "" && activation != "Relu") {
    return UnimplementedError(node.DebugName() + ": QAdd activation \"" + activation +
                              "\" is not supported (only \"\" and \"Relu\")");
  }
  const bool relu = activation == "Relu";
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(y_zp.dtype(), a.sizes()));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    float v = LoadReal(a, i, pa) + LoadReal(b, i, pb);
    if (relu) v = std::max(v, 0.0f);
    if (y.dtype() == DataType::kUint8) {
      y.data<uint8_t>()[i] = QuantizeToInt<uint8_t>(v, py.scale, py.zero_point);
    } else {
      y.data<int8_t>()[i] = QuantizeToInt<int8_t>(v, py.scale, py.zero_point);
    }
  }
  return std::vector<Tensor>{y};
}

}  // namespace

void RegisterQuantAddReference(ReferenceRegistry& registry) {
  registry.Register("qtune::QAdd", QAddReference);
}

}  // namespace qtune::runtime
