#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

// Removes default-domain Identity nodes, and Dropout nodes in inference mode whose mask
// output nobody reads; chains collapse in one call.
//
// Consumers are rewired to the node's input. When the removed node's output is a graph
// output, the graph output keeps its name: the input value is renamed to it, which is
// possible only when the input is another node's output, is not a graph output itself,
// and is not read by a subgraph. Otherwise the node stays. Nodes whose output a subgraph
// reads (by name) also stay.
StatusOr<bool> RemoveIdentity(ir::Graph& graph, const PassOptions& options);

}  // namespace qtune::passes
