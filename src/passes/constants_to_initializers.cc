#include "passes/constants_to_initializers.h"

#include "core/logging.h"
#include "ir/constant.h"
#include "passes/pass_util.h"

namespace qtune::passes {

StatusOr<bool> ConstantsToInitializers(ir::Graph& graph, const PassOptions& options) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (!ir::IsConstantNode(*node)) continue;
    if (node->num_outputs() != 1 || !IsLive(node->output(0))) continue;
    // Sparse and string constants (Unimplemented) and malformed ones stay nodes.
    StatusOr<Tensor> value = ir::ConstantValue(*node);
    if (!value.ok()) {
      QTUNE_LOG_DEBUG("constants_to_initializers: keeping {}", value.status().ToString());
      continue;
    }
    RETURN_IF_ERROR(ReplaceNodeWithInitializers(graph, node, {*value}));
    changed = true;
  }
  return changed;
}

}  // namespace qtune::passes
