// Folds a DequantizeLinear whose inputs are all constants into a float32 initializer:
//
//   DequantizeLinear(q const, scale const [, zero_point const])  =>  initializer
//   holding (q - zero_point) * scale, under the output's name
//
// for int4, uint4, int8, uint8, int16, uint16 and int32 q with a float32 scale that is per
// tensor (one element), per axis (a vector along `axis`, default 1, negative counts from
// the end) or blocked (block_size > 0: the scale has q's sizes with ceil(size / block)
// along `axis`; the int4 weights of a Conv or of a MatMul/Gemm the low-bit kernel did not
// take). Float8 and float16-scale forms are left alone, as are DequantizeLinear nodes whose
// output is not read. The folded q, scale and zero point
// initializers are removed when nothing else reads them.
//
// The runtime runs this after its QDQ fusions (runtime/fusion/fusion_pipeline.h): a weight
// DequantizeLinear that did not fuse into an int8 kernel would otherwise run at every
// inference and keep its consumer (Conv, MatMul, Gemm...) off the oneDNN kernels, which
// need constant weights. It is not in the default pass pipeline: there the quantized
// weights must stay visible so that QDQ fusion can find them.
#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

StatusOr<bool> FoldConstantDequantize(ir::Graph& graph, const PassOptions& options);

// The same, returning how many DequantizeLinear nodes were folded.
StatusOr<int> FoldConstantDequantizeCount(ir::Graph& graph);

}  // namespace qtune::passes
