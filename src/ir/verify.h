// Structural checks on a Graph: the invariants every pass must preserve.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::ir {

// Checks that: value names are unique and non-empty; non-empty node names are unique;
// every node has an op_type; every node input (and implicit input) is a graph input, an
// initializer or the output of a node in the graph; node outputs point back to their
// producer; use-lists match the inputs exactly; graph outputs are values of the graph and
// marked as such; the graph is acyclic; initializer types match their tensors; every
// dtype is a known ONNX type or kUndefined (not yet inferred; never for initializers).
// Returns InvalidArgument naming the first offending node or value. O(nodes + edges).
Status Verify(const Graph& graph);

}  // namespace qtune::ir
