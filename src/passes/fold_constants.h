#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

// Evaluates, once, every default-domain node whose inputs are all constant initializers
// (or omitted) and replaces it by initializers of the same names; folds chains to a fixed
// point in one call.
//
// Skipped, leaving the node as it is: Constant nodes (constants_to_initializers' job),
// nondeterministic ops (Random*, Multinomial, Bernoulli), nodes with subgraphs, nodes no
// one reads, nodes the evaluator answers Unimplemented for, and nodes with an output
// larger than options.max_folded_tensor_bytes. Returns false without looking at the graph
// when options.evaluator is null. Any other evaluator error is returned, naming the node.
// This pass is shape-independent: it never folds Shape/Size of a non-constant value.
StatusOr<bool> FoldConstants(ir::Graph& graph, const PassOptions& options);

}  // namespace qtune::passes
