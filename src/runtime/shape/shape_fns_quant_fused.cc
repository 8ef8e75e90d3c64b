// Shape functions of qtune's integer fused ops (quant_ops.h): the sizes of the float op
// they replace, in the type of y_zero_point (float32 when y_scale is omitted).
#include "runtime/fusion/quant_ops.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

StatusOr<DataType> QuantizedOutputType(const ShapeArgs& args, size_t y_scale, size_t y_zp) {
  if (!args.has_input(y_scale)) return DataType::kFloat32;
  if (!args.has_input(y_zp)) return ShapeError(args.node, "y_scale needs a y_zero_point");
  return args.input(y_zp).dtype;
}

// Runs the shape function of `float_op` on the data inputs X and W (and B).
StatusOr<std::vector<ValueInfo>> LinearShape(const ShapeArgs& args, const char* float_op) {
  using namespace qlinear;
  if (!args.has_input(kX) || !args.has_input(kW)) return ShapeError(args.node, "needs X and W");
  ShapeFn fn = ShapeRegistry::Get().Find(float_op);
  if (fn == nullptr) return InternalError(std::string("no shape function for ") + float_op);
  const ValueInfo* data[] = {args.inputs[kX], args.inputs[kW],
                             args.has_input(kBias) ? args.inputs[kBias] : nullptr};
  ASSIGN_OR_RETURN(std::vector<ValueInfo> out, fn(ShapeArgs{args.node, data, args.opset}));
  ASSIGN_OR_RETURN(out[0].dtype, QuantizedOutputType(args, kYScale, kYZeroPoint));
  return out;
}

StatusOr<std::vector<ValueInfo>> QConvShape(const ShapeArgs& args) {
  return LinearShape(args, "Conv");
}

StatusOr<std::vector<ValueInfo>> QConvTransposeShape(const ShapeArgs& args) {
  return LinearShape(args, "ConvTranspose");
}

StatusOr<std::vector<ValueInfo>> QMatMulShape(const ShapeArgs& args) {
  return LinearShape(args, "MatMul");
}

StatusOr<std::vector<ValueInfo>> QAddShape(const ShapeArgs& args) {
  for (size_t i = 0; i < 8; ++i) {
    if (!args.has_input(i)) return ShapeError(args.node, "needs all 8 inputs");
  }
  if (args.input(0).sizes != args.input(3).sizes) {
    return ShapeError(args.node, "A and B must have equal sizes");
  }
  return std::vector<ValueInfo>{MakeInfo(args.input(7).dtype, args.input(0).sizes)};
}

StatusOr<std::vector<ValueInfo>> QLookupShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1)) return ShapeError(args.node, "needs X and Table");
  return std::vector<ValueInfo>{MakeInfo(args.input(1).dtype, args.input(0).sizes)};
}

}  // namespace

void RegisterQuantFusedShapes(ShapeRegistry& registry) {
  registry.Register(kQConv, QConvShape);
  registry.Register(kQConvTranspose, QConvTransposeShape);
  registry.Register(kQMatMul, QMatMulShape);
  registry.Register(kQAdd, QAddShape);
  registry.Register(kQLookup, QLookupShape);
}

}  // namespace qtune::runtime
