// Read-only graph queries used by placement: op categories and the structural patterns
// that placement must recognise (LayerNorm chains, attention MatMuls, epilogue chains).
#pragma once

#include <optional>
#include <unordered_set>

#include "ir/graph.h"

namespace qtune::quant {

// An initializer, or the output of a Constant node.
bool IsConstantValue(const ir::Value* value);

// Conv, ConvTranspose, Gemm or MatMul whose input 1 (the weight) is constant and input 0
// is not.
bool IsLinearWithConstantWeight(const ir::Node& node);

// The node's only input that is not constant, or nullptr when it has none or several.
ir::Value* SoleActivationInput(const ir::Node& node);

// Walks back from `value` through an epilogue a linear op can absorb (BatchNormalization,
// activations, SiLU/HardSwish-style x*f(x), Add/Sub/Mul/Div by a constant, Identity,
// Dropout) to the linear op producing it; at most `max_steps` nodes. nullopt if the chain
// reaches anything else.
std::optional<const ir::Node*> LinearProducerThroughEpilogue(const ir::Value* value,
                                                             int max_steps = 8);

// Nodes of decomposed LayerNorm chains (ReduceMean -> Sub -> Pow -> ReduceMean -> Add ->
// Sqrt -> Div [-> Mul -> Add]), LayerNormalization nodes and Softmax nodes: placement
// never puts a quantizer on their inputs.
std::unordered_set<const ir::Node*> FindNoQuantizeNodes(const ir::Graph& graph);

// A MatMul of two activations next to a Softmax: BMM1 (its output reaches a Softmax) or
// BMM2 (its input 0 comes from one).
struct AttentionMatMul {
  const ir::Node* softmax = nullptr;
  bool is_bmm1 = false;  // false: BMM2
};
std::optional<AttentionMatMul> MatchAttentionMatMul(const ir::Node& matmul);

}  // namespace qtune::quant
