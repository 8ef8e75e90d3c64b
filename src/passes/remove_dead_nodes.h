#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

// Removes every node none of whose outputs is read (by a node, a subgraph or a graph
// output), repeatedly, so whole dead branches go; then removes initializers nobody reads.
//
// Nodes of every domain are removable: ONNX operators are pure functions of their inputs
// (the default domain has no side-effecting op), and qtune treats custom-domain nodes the
// same way. Graph inputs are the model's interface and always stay, including initializers
// that are also listed as graph inputs.
StatusOr<bool> RemoveDeadNodes(ir::Graph& graph, const PassOptions& options);

}  // namespace qtune::passes
