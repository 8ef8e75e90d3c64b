// Shape functions of the less common ops of reference/misc_kernels.h whose output sizes
// follow from input sizes and attributes alone: Shrink, ReverseSequence, Scatter and
// MeanVarianceNormalization (X's), BitShift (broadcast), EyeLike (X's sizes, dtype
// attribute), Det (the batch dims) and Einsum (from the equation). MaxUnpool has none: its
// sizes may come from the values of output_shape (infer_shapes.cc handles that input).
#include "core/shape.h"
#include "runtime/reference/einsum_equation.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

StatusOr<std::vector<ValueInfo>> SameAsInput0(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "input 0 is missing");
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, args.input(0).sizes)};
}

StatusOr<std::vector<ValueInfo>> BitShiftShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1)) return ShapeError(args.node, "needs X and Y");
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                   BroadcastSizes(args.node, args.input(0).sizes, args.input(1).sizes));
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, std::move(sizes))};
}

StatusOr<std::vector<ValueInfo>> EyeLikeShape(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "input 0 is missing");
  if (args.input(0).sizes.size() != 2) {
    return ShapeError(args.node, "input is [" + SizesToString(args.input(0).sizes) +
                                     "]; EyeLike needs a 2-D tensor");
  }
  DataType type = args.input(0).dtype;
  if (args.node.HasAttribute("dtype")) {
    const int64_t dtype = args.node.GetInt("dtype", 0);
    if (!IsKnownDataType(static_cast<int32_t>(dtype))) {
      return ShapeError(args.node, "attribute dtype " + std::to_string(dtype) + " is unknown");
    }
    type = static_cast<DataType>(dtype);
  }
  return std::vector<ValueInfo>{MakeInfo(type, args.input(0).sizes)};
}

StatusOr<std::vector<ValueInfo>> DetShape(const ShapeArgs& args) {
  if (!args.has_input(0)) return ShapeError(args.node, "input 0 is missing");
  const std::vector<int64_t>& x = args.input(0).sizes;
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2]) {
    return ShapeError(args.node, "input X is [" + SizesToString(x) +
                                     "]; Det needs square matrices in the last two dims");
  }
  return std::vector<ValueInfo>{
      MakeInfo(args.input(0).dtype, std::vector<int64_t>(x.begin(), x.end() - 2))};
}

StatusOr<std::vector<ValueInfo>> EinsumShape(const ShapeArgs& args) {
  std::vector<std::vector<int64_t>> sizes;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    if (!args.has_input(i))
      return ShapeError(args.node, "input " + std::to_string(i) + " is missing");
    sizes.push_back(args.input(i).sizes);
  }
  if (sizes.empty()) return ShapeError(args.node, "needs at least one input");
  if (!args.node.HasAttribute("equation")) {
    return ShapeError(args.node, "the required attribute 'equation' is missing");
  }
  ASSIGN_OR_RETURN(reference::EinsumPlan plan,
                   reference::PlanEinsum(args.node, args.node.GetString("equation", ""), sizes));
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, plan.output_sizes())};
}

}  // namespace

void RegisterMiscShapes(ShapeRegistry& registry) {
  // Attention: qtune domain, Y is Q's [B, S, H*D] (fusion/fused_ops.h).
  for (const char* op :
       {"Shrink", "ReverseSequence", "Scatter", "MeanVarianceNormalization", "Attention"}) {
    registry.Register(op, SameAsInput0);
  }
  registry.Register("BitShift", BitShiftShape);
  registry.Register("EyeLike", EyeLikeShape);
  registry.Register("Det", DetShape);
  registry.Register("Einsum", EinsumShape);
}

}  // namespace qtune::runtime
