// Shape functions of elementwise ops: unary (same type and sizes as input 0), variadic
// broadcasting arithmetic, comparisons (bool), Where, Cast.
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

StatusOr<std::vector<ValueInfo>> SameAsFirstInput(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "input 0 is missing");
  std::vector<ValueInfo> out(args.node.num_outputs());
  out[0] = MakeInfo(args.input(0).dtype, args.input(0).sizes);
  return out;
}

StatusOr<std::vector<int64_t>> BroadcastAll(const ShapeArgs& args) {
  std::vector<int64_t> sizes;
  bool first = true;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    if (!args.has_input(i)) continue;
    if (first) {
      sizes = args.input(i).sizes;
      first = false;
      continue;
    }
    ASSIGN_OR_RETURN(sizes, BroadcastSizes(args.node, sizes, args.input(i).sizes));
  }
  if (first) return ShapeError(args.node, "has no inputs");
  return sizes;
}

StatusOr<std::vector<ValueInfo>> Broadcasting(const ShapeArgs& args) {
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, BroadcastAll(args));
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, std::move(sizes))};
}

StatusOr<std::vector<ValueInfo>> BroadcastingToBool(const ShapeArgs& args) {
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, BroadcastAll(args));
  return std::vector<ValueInfo>{MakeInfo(DataType::kBool, std::move(sizes))};
}

StatusOr<std::vector<ValueInfo>> WhereShape(const ShapeArgs& args) {
  if (!args.has_input(1)) return ShapeError(args.node, "input 1 is missing");
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, BroadcastAll(args));
  return std::vector<ValueInfo>{MakeInfo(args.input(1).dtype, std::move(sizes))};
}

StatusOr<std::vector<ValueInfo>> CastShape(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "input 0 is missing");
  int64_t to = args.node.GetInt("to", 0);
  if (!IsKnownDataType(static_cast<int32_t>(to))) {
    return ShapeError(args.node, "attribute 'to' is not a known data type: " + std::to_string(to));
  }
  return std::vector<ValueInfo>{MakeInfo(static_cast<DataType>(to), args.input(0).sizes)};
}

StatusOr<std::vector<ValueInfo>> CastLikeShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1)) return ShapeError(args.node, "needs 2 inputs");
  return std::vector<ValueInfo>{MakeInfo(args.input(1).dtype, args.input(0).sizes)};
}

}  // namespace

void RegisterElementwiseShapes(ShapeRegistry& registry) {
  for (const char* op :
       {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Gelu", "Exp",
        "Log", "Sqrt", "Abs", "Neg", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Identity",
        "Softplus", "Softsign", "Elu", "Selu", "Celu", "Mish", "Sin", "Cos", "Clip", "Not",
        "Dropout", "BatchNormalization", "InstanceNormalization", "LayerNormalization",
        "GroupNormalization", "LRN", "Softmax", "LogSoftmax", "Hardmax", "PRelu"}) {
    registry.Register(op, SameAsFirstInput);
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod"}) {
    registry.Register(op, Broadcasting);
  }
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or",
                         "Xor"}) {
    registry.Register(op, BroadcastingToBool);
  }
  registry.Register("Where", WhereShape);
  registry.Register("Cast", CastShape);
  registry.Register("CastLike", CastLikeShape);
}

}  // namespace qtune::runtime
