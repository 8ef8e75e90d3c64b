// Small helpers the passes share. Internal to src/passes.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::passes {

// True for nodes of the default ONNX domain ("" or "ai.onnx").
bool IsDefaultDomain(const ir::Node& node);

// True when the value is a constant the pass may read: an initializer that is not also a
// graph input (an initializer listed as a graph input is a default the caller may
// override at run time, so it is not a constant).
bool IsConstant(const ir::Value* value);

// True when some node or graph output reads the value. False for nullptr.
bool IsLive(const ir::Value* value);

// True when a subgraph (If/Loop/Scan body) reads the value. Subgraph bodies are kept as
// serialized protos that refer to outer values by NAME, so such a value may be neither
// renamed nor replaced by a value of another name.
bool HasImplicitUse(const ir::Value* value);

// Replaces `node` by initializers holding `outputs` (one per node output; outputs whose
// value is absent or not live are dropped). Each initializer takes the name of the output
// it replaces, so consumers, graph outputs and subgraphs see the same names as before.
// REQUIRES: outputs.size() >= node->num_outputs() for every live output index, and each
// live output's tensor is valid.
Status ReplaceNodeWithInitializers(ir::Graph& graph, ir::Node* node,
                                   const std::vector<Tensor>& outputs);

// Makes `replacement` take over the uses, graph-output slot and name of `node`'s output
// `old_value`, then removes `node`. `replacement` is renamed to `old_value`'s name, so
// what consumers see by name is unchanged.
// REQUIRES: every other output of `node` is absent or not live; `replacement` has no
// implicit (subgraph) uses, since it is renamed.
Status ReplaceNodeOutputKeepingName(ir::Graph& graph, ir::Node* node, ir::Value* old_value,
                                    ir::Value* replacement);

}  // namespace qtune::passes
