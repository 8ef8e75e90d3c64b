// Folds float-precision Casts into the QuantizeLinear / DequantizeLinear next to them, as
// strongly-typed TensorRT wants (ModelOpt's fold_q_fp16_to_fp32_casts and
// fold_dq_fp32_to_fp16_casts):
//
//   Cast(S -> T) -> QuantizeLinear(scale: U)   =>  QuantizeLinear(scale: S) on the Cast's input
//   DequantizeLinear(scale: U) -> Cast(-> T)   =>  DequantizeLinear(scale: T), output T
//
// A pair folds only when the Cast only changes float precision (S and T among float32,
// float16, bfloat16) and the fold does not widen the scale (float16 -> float32 is refused,
// so the float16 scales that ExportOptions::fp16_scales writes stay float16); the new scale
// must be representable (a normal number) in its new type, float16/bfloat16 scales need
// opset >= 19, and the scale must be a constant initializer (a shared scale is copied, not
// changed in place). Missing type information counts as foldable: a Cast whose input type
// is unknown folds into its Q with the scale left as it is. A Cast with other readers stays
// for them. Graph output names are kept.
#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

StatusOr<bool> FoldQdqCasts(ir::Graph& graph, const PassOptions& options);

// The same, returning the number of Casts folded.
StatusOr<int> FoldQdqCastsCount(ir::Graph& graph);

}  // namespace qtune::passes
