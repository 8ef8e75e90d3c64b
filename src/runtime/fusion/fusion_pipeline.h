// The runtime's graph fusions, run by Compile on a copy of the graph once concrete sizes
// are known. Each fusion is a read-only selector (finds a pattern, returns a match) and an
// action (rewrites the graph for that match); RunFusions fixes their order.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "ir/graph.h"

namespace qtune::runtime {

// Concrete types and sizes of every value by name (from shape inference). Selectors use
// them to prove a rewrite safe, e.g. that a residual Add does not broadcast.
struct TypeAndSizes {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> sizes;
};
using SizesByName = std::unordered_map<std::string, TypeAndSizes>;

struct FusionReport {
  int activations = 0;
  int matmul_activation = 0;
  int conv_add = 0;
  int conv_activation = 0;
  int layer_norm = 0;
  int gelu = 0;
  int matmul_bias = 0;
  int projection_split = 0;  // MatMulBias -> Split into one MatMulBias per part
  int matmul_residual = 0;   // MatMulBias -> Add(residual) into MatMulBias's Sum
  int attention = 0;         // qtune::Attention (attention_fusion.cc)
  int qdq_passthrough = 0;   // int8 data movement / pooling and qtune::QAdd
  int qdq_linear = 0;        // qtune::QConv and qtune::QMatMul
  int qdq_lookup = 0;        // qtune::QLookup
  int lowbit_matmul = 0;     // qtune::MatMulNBits (weight-only int4/int8, lowbit_matmul_fusion.cc)
  // DequantizeLinear nodes of constants left after the QDQ fusions, folded to float
  // constants (passes/fold_constant_dequantize.h) so their readers run on oneDNN kernels.
  int dequantize_folded = 0;
  int total() const {
    return activations + attention + conv_add + conv_activation + layer_norm + gelu + matmul_bias +
           projection_split + matmul_residual + matmul_activation + qdq_passthrough + qdq_linear +
           qdq_lookup + lowbit_matmul + dequantize_folded;
  }
};

StatusOr<FusionReport> RunFusions(ir::Graph& graph, const SizesByName& sizes);

// Individual fusions (exposed for tests). Each returns how many matches it rewrote.
StatusOr<int> FuseDecomposedActivations(ir::Graph& graph);
StatusOr<int> FuseMatMulActivation(
    ir::Graph& graph);  // MatMulBias/linear Gemm -> activation  // x*Clip(x+3,0,6)/6 -> HardSwish
StatusOr<int> FuseConvAdd(ir::Graph& graph, const SizesByName& sizes);         // Conv->Add[->act]
StatusOr<int> FuseConvActivation(ir::Graph& graph, const SizesByName& sizes);  // Conv->act
// Transformer encoders (transformer_fusion.cc, matmul_bias_fusion.cc).
StatusOr<int> FuseDecomposedLayerNorm(ir::Graph& graph, const SizesByName& sizes);
StatusOr<int> FuseDecomposedGelu(ir::Graph& graph);  // erf and tanh forms -> Gelu
StatusOr<int> FuseMatMulBias(ir::Graph& graph, const SizesByName& sizes);  // -> MatMulBias
// MatMulBias -> Split along the last axis -> one MatMulBias per part (matmul_split_fusion.cc).
StatusOr<int> FuseProjectionSplit(ir::Graph& graph, const SizesByName& sizes);
// MatMulBias -> Add(residual of the same sizes) -> MatMulBias with Sum (matmul_bias_fusion.cc).
StatusOr<int> FuseMatMulResidual(ir::Graph& graph, const SizesByName& sizes);
// Q·Kᵀ [scale] [mask] Softmax ·V with its head split/merge Transposes -> qtune::Attention.
StatusOr<int> FuseAttention(ir::Graph& graph, const SizesByName& sizes);
// QDQ models (qdq_fusion.cc, qdq_passthrough_fusion.cc; run after the float fusions so
// that Conv + activation / residual Add are already one FusedConv).
StatusOr<int> FuseQdqPassThrough(ir::Graph& graph, const SizesByName& sizes);
// A Conv/ConvTranspose/MatMul/Gemm that reads a DequantizeLinear but did not fuse gets
// the string attribute kNotInt8Attribute saying why (Plan::ToString prints it).
StatusOr<int> FuseQdqLinear(ir::Graph& graph, const SizesByName& sizes);
inline constexpr char kNotInt8Attribute[] = "qtune_not_int8";
// A string attribute ("bf16") Compile sets on the nodes of its private copy that compute in
// bfloat16 (CompileOptions::bf16_nodes); a float fusion copies it from the node it starts
// from to the node it builds (pattern::CarryPrecision), so "conv1" in bf16 makes its
// FusedConv bf16 whatever the fused node is called.
inline constexpr char kPrecisionAttribute[] = "qtune_precision";
// DQ -> elementwise float chain -> Q into a 256-entry qtune::QLookup (qdq_lookup_fusion.cc).
StatusOr<int> FuseQdqLookup(ir::Graph& graph, const SizesByName& sizes);
// Weight-only low-bit MatMuls -> qtune::MatMulNBits: a constant INT4/UINT4/INT8/UINT8
// DequantizeLinear -> MatMul, and com.microsoft::MatMulNBits, each with the bias Add and
// activation that follow (lowbit_matmul_fusion.cc; run after the int8 QDQ fusions, before
// the leftover constant DequantizeLinears are folded).
StatusOr<int> FuseLowBitMatMul(ir::Graph& graph, const SizesByName& sizes);

}  // namespace qtune::runtime
