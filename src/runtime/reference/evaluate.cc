#include <string>

#include "runtime/reference/registry.h"

namespace qtune::runtime {

StatusOr<std::vector<Tensor>> EvaluateNode(const ir::Node& node, std::span<const Tensor> inputs,
                                           int64_t opset) {
  bool known_domain = node.domain().empty() || node.domain() == "ai.onnx" ||
                      node.domain() == "qtune" || node.domain() == "com.microsoft";
  if (!known_domain) {
    return UnimplementedError(node.DebugName() + ": domain '" + node.domain() +
                              "' has no reference kernels (only ONNX's, qtune's and "
                              "com.microsoft's MatMulNBits)");
  }
  ReferenceKernel kernel = ReferenceRegistry::Get().FindFor(node);
  if (kernel == nullptr) {
    return UnimplementedError(node.DebugName() + ": op " + node.op_type() + " (opset " +
                              std::to_string(opset) + ") has no reference kernel");
  }
  if (inputs.size() != node.num_inputs()) {
    return InvalidArgumentError(node.DebugName() + ": given " + std::to_string(inputs.size()) +
                                " input tensors for " + std::to_string(node.num_inputs()) +
                                " node inputs");
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs, kernel({node, inputs, opset}));
  if (outputs.size() < node.num_outputs()) {
    return InternalError(node.DebugName() + ": the reference kernel produced " +
                         std::to_string(outputs.size()) + " outputs, the node has " +
                         std::to_string(node.num_outputs()));
  }
  outputs.resize(node.num_outputs());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (node.output(i) != nullptr && !outputs[i].is_valid()) {
      return InternalError(node.DebugName() + ": the reference kernel left output " +
                           std::to_string(i) + " ('" + node.output(i)->name() + "') empty");
    }
  }
  return outputs;
}

}  // namespace qtune::runtime
