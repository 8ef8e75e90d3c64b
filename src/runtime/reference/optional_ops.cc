// Optional ops on RunValues: Optional (opset 15), OptionalHasElement and
// OptionalGetElement (opset 15; from opset 18 their input may also be a plain tensor or
// sequence, or, for OptionalHasElement, omitted). An optional that holds a value is that
// value (a tensor or a sequence RunValue); an empty one is RunValue::None().
#include <string>
#include <vector>

#include "runtime/reference/tensor_util.h"
#include "runtime/reference/value_kernels.h"
#include "runtime/reference/value_util.h"

namespace qtune::runtime {
namespace {

using reference::NodeError;
using Result = StatusOr<std::vector<RunValue>>;

// The value itself as a new output: a tensor is copied, a sequence shares its elements.
RunValue CopyOf(const RunValue& value) {
  if (value.is_tensor()) return RunValue::Of(value.tensor().Clone());
  std::vector<Tensor> elements;
  elements.reserve(value.sequence().size());
  for (const Tensor& t : value.sequence()) elements.push_back(reference::Keepable(t));
  return RunValue::Sequence(value.elem_dtype(), std::move(elements));
}

// Optional: an optional holding the input, or an empty one when the input is omitted (the
// `type` attribute then says what it could hold; the value itself needs no type).
Result Optional(const ValueKernelArgs& args) {
  if (args.inputs.size() > 1) {
    return NodeError(args.node,
                     "expects at most 1 input but has " + std::to_string(args.inputs.size()));
  }
  if (args.inputs.empty() || (args.inputs[0].is_tensor() && !args.inputs[0].is_present())) {
    return std::vector<RunValue>{RunValue::None()};
  }
  if (args.inputs[0].is_none()) {
    return NodeError(args.node,
                     "input 0 is an empty optional; an optional cannot hold an "
                     "optional");
  }
  return std::vector<RunValue>{CopyOf(args.inputs[0])};
}

// OptionalHasElement: a bool scalar, true when the input holds a tensor or a sequence. An
// omitted input (allowed from opset 18) is false.
Result OptionalHasElement(const ValueKernelArgs& args) {
  if (args.inputs.size() > 1) {
    return NodeError(args.node, "expects 1 input but has " + std::to_string(args.inputs.size()));
  }
  const bool present = !args.inputs.empty() && args.inputs[0].is_present();
  return std::vector<RunValue>{RunValue::Of(Tensor::Scalar<bool>(present))};
}

// OptionalGetElement: the tensor or sequence the optional holds (from opset 18 a plain
// tensor or sequence input passes through). InvalidArgument for an empty optional.
Result OptionalGetElement(const ValueKernelArgs& args) {
  if (args.inputs.size() != 1) {
    return NodeError(args.node, "expects 1 input but has " + std::to_string(args.inputs.size()));
  }
  const RunValue& in = args.inputs[0];
  if (in.is_none()) {
    return NodeError(args.node,
                     "the input optional is empty, so it has no element to get; "
                     "guard the node with OptionalHasElement (and If)");
  }
  if (!in.is_present()) return NodeError(args.node, "input 0 is required but is omitted");
  return std::vector<RunValue>{CopyOf(in)};
}

}  // namespace

void RegisterOptionalKernels(ValueKernelRegistry& registry) {
  registry.Register("Optional", Optional);
  registry.Register("OptionalHasElement", OptionalHasElement);
  registry.Register("OptionalGetElement", OptionalGetElement);
}

}  // namespace qtune::runtime
