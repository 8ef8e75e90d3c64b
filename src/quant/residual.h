// Structural detection of residual Adds (ResNet/MobileNet/transformer blocks).
//
// An Add(a, b) of two non-constant tensors is residual when one input (the branch) is a
// linear op's output through an absorbable epilogue (graph_patterns.h), and the other
// (the shortcut) is either
//   * identity: a value from which the branch's linear op is reached (the block input,
//     which also feeds the block's first conv), or
//   * downsample: the output of one linear op (through its epilogue) whose input also
//     reaches the branch's linear op through at least one other linear op.
// An Add of two single-conv branches of one value, an Add of unrelated tensors (FPN
// merges) and an Add of a constant are not residual. The search backwards is bounded
// (kMaxBlockNodes), so a shared ancestor far away does not count.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace qtune::quant {

inline constexpr int kMaxBlockNodes = 64;

struct ResidualAdd {
  const ir::Node* add = nullptr;
  int branch_input = 0;                     // the conv branch: fused into the linear op's epilogue
  int shortcut_input = 1;                   // the skip connection
  const ir::Node* branch_linear = nullptr;  // the branch's last linear op
  const ir::Node* downsample_linear = nullptr;  // the shortcut's linear op, or nullptr
};

// Every residual Add, in graph node order.
std::vector<ResidualAdd> FindResidualAdds(const ir::Graph& graph);

}  // namespace qtune::quant
