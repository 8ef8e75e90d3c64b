// Export of weight-only (low-bit) weight quantizers: int4 and blockwise int8 weights, and
// weights whose scales come from the clip or AWQ search. Used by ExportQdq (export_qdq.h).
//
//   QDQ (cpu, trt; ort for int8):  W_q (INT4 / UINT4 / INT8 initializer, the weight's own
//     sizes) -> DequantizeLinear(axis = reduction axis, block_size) [-> Cast to float32
//     when the scales are float16] -> the MatMul / Gemm. Per channel (block_size 0):
//     DequantizeLinear(axis = output axis), 1-D scales.
//   MatMulNBits (--target ort, int4): the MatMul becomes com.microsoft MatMulNBits(A, B,
//     scales, [zero_points]) with B uint8 [N, K / block, block / 2] (low nibble first),
//     scales float32 [N, K / block] (the float16-rounded values when scale_type is fp16:
//     MatMulNBits takes A's type), zero_points uint8 [N, ceil(K / block / 2)] packed (omitted
//     when symmetric: the op's default zero point 8 = INT4 code 0). A Gemm (alpha = beta = 1,
//     transA = 0) becomes MatMulNBits + Add(C).
//   AWQ (site.input_scale = s): the weight is quantized as diag(s) W and the activation
//     the layer reads is multiplied by 1 / s (a Mul with a [K] constant before the layer).
//   Conv: blocks along W's axis 1, the input channels of each group (conv_weight_blocks.h):
//     codes in the weight's layout, DequantizeLinear(axis = 1, block_size) -> Conv, for
//     every target (no MatMulNBits for Conv); AWQ's 1 / s (group = 1 convs only) is a
//     [1, C, 1, 1] Mul on the conv's input.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/block_weights.h"
#include "quant/quant_types.h"

namespace qtune::quant {

// True when `site` (a weight) needs this path rather than the per-channel int8/fp8 one.
bool UsesLowBitPath(const QuantSite& site);

// The weight of `site` as read by `layer` (a MatMul, Gemm or Conv reading it as
// input 1), quantized: the K x N matrix, whether the initializer is [N, K] (Gemm transB) and the
// reduction axis. Errors name the weight: not 2-D, K not a multiple of the block, an
// input_scale / input_mean_square of the wrong length.
struct LowBitWeight {
  QuantizedMatrix matrix;
  bool transposed = false;
  int reduction_axis = 0;
  bool fp16_scales = false;
  bool conv = false;  // a Conv weight [O, I, k...]: matrix K = I, N = O * S
                      // (conv_weight_blocks.h), reduction_axis 1
};
StatusOr<LowBitWeight> QuantizeLowBitWeight(const ir::Node& layer, const QuantSite& site,
                                            const Tensor& weight);

// Inserts Mul(x, 1 / s) on input 0 of `layer` (AWQ); 1 / s is [K], or [1, C, 1...] for a
// Conv of `conv_rank`-D weight (s per input channel, broadcast over N and the spatial
// axes). `base` names the new tensors.
Status InsertInputScale(ir::Graph& graph, ir::Node* layer, const std::vector<float>& scale,
                        const std::string& base, int conv_rank = 0);

// Replaces `layer` (MatMul, or Gemm with alpha = beta = 1 and transA = 0) by MatMulNBits
// reading `weight` (bits 4). Keeps the layer's output value. Adds the com.microsoft opset.
Status ReplaceWithMatMulNBits(ir::Graph& graph, ir::Node* layer, const LowBitWeight& weight,
                              const std::string& base);

}  // namespace qtune::quant
