// Structural checks on a Graph: the invariants every pass must preserve.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::ir {

// Checks that: value names are unique and non-empty; non-empty node names are unique;
// every node input is a graph input, an initializer or the output of a node in the graph;
// use-lists match the inputs exactly; graph outputs exist; the graph is acyclic;
// initializer types match their tensors; every dtype is a known ONNX type.
// Returns InvalidArgument naming the first offending node or value.
Status Verify(const Graph& graph);

}  // namespace qtune::ir
