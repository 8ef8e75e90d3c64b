#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

// Folds an inference-mode BatchNormalization into the Conv or ConvTranspose that feeds it:
//   s  = scale / sqrt(var + epsilon)               (per output channel)
//   W' = W * s                                     (along the output-channel axis)
//   B' = (B - mean) * s + bias                     (B = 0 when the conv has no bias)
// Applies when: the conv's output is read only by the BN (not a graph output, no
// subgraph); only the BN's first output is live; W, the conv bias (if any), scale, bias,
// mean and var are constant float32 initializers of matching sizes. Anything else is
// skipped. W and B are replaced in place when the conv is their only reader, otherwise
// new initializers are added and the shared ones stay untouched. The conv's output takes
// the BN output's name, so consumers and graph outputs see the same names as before. BN
// parameters left unread are removed.
StatusOr<bool> FoldBatchNorm(ir::Graph& graph, const PassOptions& options);

}  // namespace qtune::passes
