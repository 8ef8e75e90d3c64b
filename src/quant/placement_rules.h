// Per-layer placement rules: what a Conv/ConvTranspose/Gemm/MatMul gets quantized, or why
// it stays in floating point (the "too small to gain" and attention rules).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/quant_types.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::quant {

inline constexpr int64_t kMinChannels = 16;   // convs: input and output channels
inline constexpr int64_t kMinMatMulDim = 16;  // Gemm/MatMul: K and N
inline constexpr int64_t kMaxInt8AttentionSeq = 512;
inline constexpr int64_t kMaxFp8HeadSize = 256;
inline constexpr int64_t kMinFp8HeadSize = 8;      // head sizes <= this are skipped
inline constexpr int64_t kFp8LowChannelInput = 3;  // convs with <= this many input channels

// What placement does with one linear op.
struct LayerDecision {
  std::string skip_reason;             // non-empty: leave the layer in float
  std::vector<int> activation_inputs;  // input indices quantized per tensor
  std::optional<int> weight_axis;      // set: input 1 is a constant weight, per channel
  bool softmax_input = false;          // input 0 is an attention Softmax output
  int64_t conv_input_channels = -1;    // convs: groups x per-group input channels
};

struct LayerContext {
  const runtime::ValueInfoMap& infos;  // shape inference results
  Target target = Target::kCpu;
  QuantFormat format = QuantFormat::kInt8;  // the recipe's format for this layer's input
  // The recipe removed the activation input quantizer and keeps the weight's: the GEMV
  // rule (M = 1) does not apply, int8 activations being what does not pay there.
  bool weight_only = false;
};

// The reduction axis of a Gemm/MatMul constant weight B (where blocks run): MatMul
// rank - 2 (0 for rank 1), Gemm 1 with transB, else 0; a Conv weight [O, I / group, k...]
// (rank >= 3): 1, its input channels. nullopt for other ops.
std::optional<int> ReductionAxis(const ir::Node& node, int weight_rank);

// A weight config that needs blocks (block_size > 0, or a blockwise format): sets
// config.axis to the reduction axis and config.block_size (the format's default when 0).
// Returns why the block does not fit the weight ("" when it fits or no blocks are
// asked): not a 2-D Gemm/MatMul or a Conv constant weight, the reduction axis (a Conv's
// input channels per group) shorter than a block, or not a multiple of it; clip or awq on
// a grouped conv. REQUIRES: node.input(1) is an initializer.
std::string FitWeightBlocks(const ir::Node& node, QuantizerConfig& config);

// REQUIRES: node.op_type() is Conv, ConvTranspose, Gemm or MatMul.
LayerDecision DecideLayer(const ir::Node& node, const LayerContext& context);

// The known sizes of `value` (initializer or inferred), or nullopt.
std::optional<std::vector<int64_t>> KnownSizes(const ir::Value* value,
                                               const runtime::ValueInfoMap& infos);

}  // namespace qtune::quant
