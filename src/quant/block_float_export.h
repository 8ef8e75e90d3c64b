// Export of NVFP4 and MXFP8 weights (QuantFormat::kNvfp4 / kMxfp8, codecs in
// core/block_float.h), for the MatMul / Gemm layers that read the weight as input 1:
//
//   NVFP4 (opset 23, ModelOpt's layout):
//     W_e2m1 (float4e2m1, the weight's sizes) ----------------------------\
//     W_scale_e4m3 (float8e4m3fn, ceil(K/16) on the reduction axis)        DequantizeLinear
//       -> DequantizeLinear(x_scale = W_global, fp32 scalar) -> scales --/ (axis = reduction
//                                                                           axis, block 16)
//   MXFP8 (opset 24):
//     DequantizeLinear(W_e4m3 (float8e4m3fn), W_scale_e8m0 (float8e8m0), axis, block 32,
//                      output_dtype = float32)
//   Float scales (opset 21, BlockFloatLayout::kFloatScales, what --target ort writes:
//     ONNX Runtime 1.30 has no DequantizeLinear for float4e2m1 or float8e8m0 scales):
//     DequantizeLinear(W_e4m3, W_scale (float32), axis, block) -- MXFP8's powers of two as
//     float32; NVFP4's E2M1 values held as e4m3 (each is one exactly, so the file holds 8
//     bits per value) and its scales as decode(E4M3) * global. Both compute exactly what
//     the standard layout computes.
//
// The DequantizeLinear output replaces the weight in every reader; the float weight is
// removed when nothing else reads it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/quant_types.h"

namespace qtune::quant {

bool IsBlockFloatFormat(QuantFormat format);  // kNvfp4 or kMxfp8

enum class BlockFloatLayout {
  kStandard,     // NVFP4: float4e2m1 + two DequantizeLinears (23); MXFP8: float8e8m0 (24)
  kFloatScales,  // e4m3 values, float32 block scales (21)
};

// kFloatScales for --target ort (ONNX Runtime 1.30 runs neither float4e2m1 nor
// float8e8m0 DequantizeLinears), kStandard otherwise.
BlockFloatLayout BlockFloatLayoutFor(Target target);

// The default-domain opset the export needs: 23 (NVFP4), 24 (MXFP8), 21 (float scales).
int64_t BlockFloatOpset(QuantFormat format, BlockFloatLayout layout);

struct BlockFloatExport {
  std::string dq_node;                       // the DequantizeLinear producing the weight
  float min_scale = 0.0f, max_scale = 0.0f;  // decoded block scales (global applied)
  int64_t channels = 0;                      // N (a Conv: O * kernel positions)
  int64_t k = 0;                             // the reduction length
};

// Quantizes weight initializer `weight` (float32, 2-D) and rewires `consumers` (node,
// input index 1; each a MatMul or Gemm with the same reduction axis, or each a Conv:
// W [O, I / group, k...] blocked along axis 1, inside each group). Errors name the
// weight: another op or input index, not a 2-D (Conv: rank >= 3) float32 initializer, a
// non-finite element.
StatusOr<BlockFloatExport> ExportBlockFloatWeight(
    ir::Graph& graph, QuantFormat format, ir::Value* weight,
    const std::vector<std::pair<ir::Node*, int>>& consumers, BlockFloatLayout layout);

}  // namespace qtune::quant
