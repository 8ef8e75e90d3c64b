// Shape functions of the ONNX quantization ops: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul. Types
// and scale layouts are checked by the same rules the reference kernels apply
// (reference/quant_kernels.h); Conv and MatMul geometry comes from their shape functions.
#include "runtime/reference/quant_kernels.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

DataType TypeOf(const ShapeArgs& args, size_t i) {
  return args.has_input(i) ? args.input(i).dtype : DataType::kUndefined;
}

// quant::QuantizeOutputType or quant::DequantizeOutputType.
using OutputTypeRule = StatusOr<DataType> (*)(const ir::Node& node, int64_t opset, DataType x,
                                              DataType scale, DataType zero_point);

// QuantizeLinear / DequantizeLinear: x's sizes in the type `output_type` gives, once the
// scale (input 1, named `scale_name`) and zero point fit x.
StatusOr<std::vector<ValueInfo>> LinearQuantShape(const ShapeArgs& args, OutputTypeRule output_type,
                                                  const char* scale_name) {
  if (!args.has_input(0) || !args.has_input(1)) {
    return ShapeError(args.node, std::string("needs x and ") + scale_name);
  }
  ASSIGN_OR_RETURN(DataType y, output_type(args.node, args.opset, TypeOf(args, 0), TypeOf(args, 1),
                                           TypeOf(args, 2)));
  RETURN_IF_ERROR(quant::ResolveParamLayout(args.node, args.opset, args.input(0).sizes,
                                            args.input(1).sizes,
                                            args.has_input(2) ? &args.input(2).sizes : nullptr)
                      .status());
  return std::vector<ValueInfo>{MakeInfo(y, args.input(0).sizes)};
}

StatusOr<std::vector<ValueInfo>> QuantizeLinearShape(const ShapeArgs& args) {
  return LinearQuantShape(args, &quant::QuantizeOutputType, "y_scale");
}

StatusOr<std::vector<ValueInfo>> DequantizeLinearShape(const ShapeArgs& args) {
  return LinearQuantShape(args, &quant::DequantizeOutputType, "x_scale");
}

StatusOr<std::vector<ValueInfo>> DynamicQuantizeLinearShape(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "needs x");
  if (args.input(0).dtype != DataType::kFloat32) {
    return ShapeError(args.node,
                      "x must be float32, not " + std::string(DataTypeName(args.input(0).dtype)));
  }
  return std::vector<ValueInfo>{MakeInfo(DataType::kUint8, args.input(0).sizes),
                                MakeInfo(DataType::kFloat32, {}), MakeInfo(DataType::kUint8, {})};
}

// The sizes `float_op`'s shape function gives for data inputs `data` and `weight`, in
// `type`. The integer ops take uint8/int8 data.
StatusOr<std::vector<ValueInfo>> IntegerShape(const ShapeArgs& args, const char* float_op,
                                              size_t data, size_t weight, DataType type) {
  if (!args.has_input(data) || !args.has_input(weight)) {
    return ShapeError(args.node, "needs both data inputs");
  }
  for (size_t i : {data, weight}) {
    const DataType t = args.input(i).dtype;
    if (IsFloatingPoint(t) && DataTypeSize(t) == 1) {
      return UnimplementedError(args.node.DebugName() + ": float8 inputs are not supported");
    }
    if (t != DataType::kUint8 && t != DataType::kInt8) {
      return ShapeError(args.node, "input " + std::to_string(i) + " is " +
                                       std::string(DataTypeName(t)) + "; expected uint8 or int8");
    }
  }
  ShapeFn fn = ShapeRegistry::Get().Find(float_op);
  if (fn == nullptr) return InternalError(std::string("no shape function for ") + float_op);
  const ValueInfo* operands[] = {args.inputs[data], args.inputs[weight]};
  ASSIGN_OR_RETURN(std::vector<ValueInfo> out, fn(ShapeArgs{args.node, operands, args.opset}));
  out.resize(1);
  out[0].dtype = type;
  return out;
}

StatusOr<std::vector<ValueInfo>> ConvIntegerShape(const ShapeArgs& args) {
  return IntegerShape(args, "Conv", 0, 1, DataType::kInt32);
}

StatusOr<std::vector<ValueInfo>> MatMulIntegerShape(const ShapeArgs& args) {
  return IntegerShape(args, "MatMul", 0, 1, DataType::kInt32);
}

// QLinearConv / QLinearMatMul: the output has y_zero_point's type (input 7).
StatusOr<std::vector<ValueInfo>> QLinearShape(const ShapeArgs& args, const char* float_op) {
  if (!args.has_input(7)) return ShapeError(args.node, "needs y_zero_point (input 7)");
  const DataType y = args.input(7).dtype;
  if (y != DataType::kUint8 && y != DataType::kInt8) {
    return ShapeError(
        args.node, "y_zero_point is " + std::string(DataTypeName(y)) + "; expected uint8 or int8");
  }
  return IntegerShape(args, float_op, 0, 3, y);
}

StatusOr<std::vector<ValueInfo>> QLinearConvShape(const ShapeArgs& args) {
  return QLinearShape(args, "Conv");
}

StatusOr<std::vector<ValueInfo>> QLinearMatMulShape(const ShapeArgs& args) {
  return QLinearShape(args, "MatMul");
}

}  // namespace

void RegisterQuantShapes(ShapeRegistry& registry) {
  registry.Register("QuantizeLinear", QuantizeLinearShape);
  registry.Register("DequantizeLinear", DequantizeLinearShape);
  registry.Register("DynamicQuantizeLinear", DynamicQuantizeLinearShape);
  registry.Register("ConvInteger", ConvIntegerShape);
  registry.Register("MatMulInteger", MatMulIntegerShape);
  registry.Register("QLinearConv", QLinearConvShape);
  registry.Register("QLinearMatMul", QLinearMatMulShape);
}

}  // namespace qtune::runtime
