// Shape functions of elementwise ops: unary (same type and sizes as input 0), variadic
// broadcasting arithmetic, comparisons (bool), Where, Cast; and the normalizations, whose
// Y has X's sizes (with their optional extra outputs).
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

StatusOr<std::vector<ValueInfo>> SameAsFirstInput(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "input 0 is missing");
  std::vector<ValueInfo> out(args.node.num_outputs());
  out[0] = MakeInfo(args.input(0).dtype, args.input(0).sizes);
  return out;
}

// Dropout's optional mask has X's sizes and is bool.
StatusOr<std::vector<ValueInfo>> DropoutShape(const ShapeArgs& args) {
  ASSIGN_OR_RETURN(std::vector<ValueInfo> out, SameAsFirstInput(args));
  if (out.size() > 1) out[1] = MakeInfo(DataType::kBool, args.input(0).sizes);
  return out;
}

// Inference mode, and training mode from opset 14 (the reference tier: running_mean and
// running_var, [C] of input_mean's and input_var's types). Earlier opsets' training outputs
// are refused here, at compile time, rather than by the kernel at run time.
StatusOr<std::vector<ValueInfo>> BatchNormalizationShape(const ShapeArgs& args) {
  if (args.node.GetInt("training_mode", 0) != 0 && args.opset >= 14) {
    ASSIGN_OR_RETURN(std::vector<ValueInfo> out, SameAsFirstInput(args));
    if (args.input(0).sizes.size() < 2) return ShapeError(args.node, "X needs rank >= 2");
    for (size_t i = 1; i < out.size() && i < 3; ++i) {
      if (!args.has_input(i + 2)) return ShapeError(args.node, "input_mean/input_var missing");
      out[i] = MakeInfo(args.input(i + 2).dtype, {args.input(0).sizes[1]});
    }
    return out;
  }
  if (args.node.GetInt("training_mode", 0) != 0) {
    return UnimplementedError(args.node.DebugName() +
                              ": training_mode=1 is supported from opset 14 only");
  }
  for (size_t i = 1; i < args.node.num_outputs(); ++i) {
    if (args.node.output(i) != nullptr) {
      return UnimplementedError(args.node.DebugName() + ": output " + std::to_string(i) +
                                " is a training output; only Y is supported");
    }
  }
  return SameAsFirstInput(args);
}

// Mean and InvStdDev: X's sizes with the normalized dimensions (axis..rank-1) set to 1, in
// stash_type (float32 by default).
StatusOr<std::vector<ValueInfo>> LayerNormalizationShape(const ShapeArgs& args) {
  ASSIGN_OR_RETURN(std::vector<ValueInfo> out, SameAsFirstInput(args));
  const std::vector<int64_t>& x = args.input(0).sizes;
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = args.node.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) {
    return ShapeError(args.node, "axis " + std::to_string(axis) + " is out of range for rank " +
                                     std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  std::vector<int64_t> stats = x;
  for (int64_t i = axis; i < rank; ++i) stats[i] = 1;
  const int64_t stash_type = args.node.GetInt("stash_type", 1);
  if (!IsKnownDataType(static_cast<int32_t>(stash_type))) {
    return ShapeError(args.node, "stash_type " + std::to_string(stash_type) + " is unknown");
  }
  for (size_t i = 1; i < out.size(); ++i) {
    out[i] = MakeInfo(static_cast<DataType>(stash_type), stats);
  }
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

// Ops whose one output has input 0's type and sizes.
// clang-format off
constexpr const char* kSameAsFirstInput[] = {
    "Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Gelu", "Exp",
    "Log", "Sqrt", "Abs", "Neg", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Identity",
    "Softplus", "Softsign", "Elu", "Selu", "Celu", "Mish", "Sin", "Cos", "Clip", "Not",
    "InstanceNormalization", "GroupNormalization", "LRN", "Softmax", "LogSoftmax", "Hardmax",
    "PRelu"};
// clang-format on

}  // namespace

void RegisterElementwiseShapes(ShapeRegistry& registry) {
  for (const char* op : kSameAsFirstInput) registry.Register(op, SameAsFirstInput);
  registry.Register("Dropout", DropoutShape);
  registry.Register("BatchNormalization", BatchNormalizationShape);
  registry.Register("LayerNormalization", LayerNormalizationShape);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod"}) {
    registry.Register(op, Broadcasting);
  }
  for (const char* op :
       {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"}) {
    registry.Register(op, BroadcastingToBool);
  }
  registry.Register("Where", WhereShape);
  registry.Register("Cast", CastShape);
  registry.Register("CastLike", CastLikeShape);
}

}  // namespace qtune::runtime
