#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

// Folds a Mul or Add by a constant that follows a Conv or ConvTranspose into its weights
// and bias, when the constant is a scalar or varies only along the output channels
// (shapes such as [C,1,1] or [1,C,1,1]):
//   Mul by m:  W' = W * m[c],  B' = B * m[c]       (no bias stays no bias)
//   Add by a:  B' = B + a[c]                        (B = 0 when the conv has no bias)
// Exporters emit these as separate nodes (e.g. PaddlePaddle's affine blocks and
// bias-less convolutions followed by an Add). Applies only when the conv output is read
// by that one node and W (and B) are float32 initializers; the Mul/Add output name is kept.
//
// And on the input side: a Mul by a constant that varies only along the channels (scalar,
// [C,1,1], [1,C,1,1]) whose output only group = 1 Convs read, as input 0, with float32
// initializer weights: W'[o, i, ...] = W[o, i, ...] * c[i] and the Convs read the Mul's
// input (the same up to float rounding: the zero padding of x * c is that of x). AWQ writes
// such a Mul (1 / s) before each Conv it quantizes; folded, it costs nothing per call.
StatusOr<bool> FoldConvAffine(ir::Graph& graph, const PassOptions& options);

}  // namespace qtune::passes
