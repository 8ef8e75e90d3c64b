#include "runtime/plan/view_ops.h"

#include <string>

#include "core/shape.h"

namespace qtune::runtime {

bool IsViewNode(const KernelRequest& request) {
  const ir::Node& node = request.node;
  const std::string& op = node.op_type();
  if (!node.domain().empty() ||
      (op != "Reshape" && op != "Squeeze" && op != "Unsqueeze" && op != "Flatten")) {
    return false;
  }
  if (request.inputs.empty() || request.inputs[0] == nullptr || request.outputs.size() != 1 ||
      request.outputs[0] == nullptr) {
    return false;
  }
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& y = *request.outputs[0];
  if (x.dtype != y.dtype || NumElements(x.sizes) != NumElements(y.sizes)) return false;
  for (size_t i = 1; i < request.inputs.size(); ++i) {
    if (request.inputs[i] != nullptr && !request.inputs[i]->has_constant()) return false;
  }
  return true;
}

}  // namespace qtune::runtime
