// qtune's own fused operators, in the custom domain "qtune". The compiler rewrites ONNX
// patterns into them (one selector + action per pattern, in this folder) so that one plan
// step runs the whole pattern. Each has a reference kernel (fused_reference.cc) composed
// from the ONNX reference semantics, so fusions are tested like any other op.
//
// qtune::FusedConv   inputs: X, W, [B], [Sum]    attributes: Conv's, plus
//   activation (string: "", Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh)
//   activation_params (floats: LeakyRelu {alpha}; Clip {min, max}; HardSigmoid {alpha, beta})
//   post_linear (floats {scale, shift}, optional)
//   Y = activation(Conv(X, W, B) + Sum) * scale + shift
//
// qtune::MatMulBias  inputs: A [..., M, K], W [K, N] (constant), bias [N] (constant), [Sum]
//   Y = activation(MatMul(A, W) + bias + Sum)   (reference kernel: matmul_bias_reference.cc)
//   optional attributes activation / activation_params as for FusedConv, plus Gelu and
//   GeluTanh (erf and tanh GELU, MatMulActivationOf); Sum (a residual) has Y's sizes
//
// qtune::Attention   inputs: Q [B, S, H*D], K [B, T, H*D], V [B, T, H*D], [mask]
//   attributes: num_heads (H), scale (float)
//   per head h (columns h*D .. h*D+D-1 of Q, K, V and Y):
//   Y_h = Softmax(Q_h K_h^T * scale + mask, last axis) V_h; mask broadcasts to [B,H,S,T]
//   (reference kernel: attention_reference.cc; oneDNN: kernels/onednn_attention.cc)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::runtime {

inline constexpr char kQtuneDomain[] = "qtune";
inline constexpr size_t kFusedConvSumInput = 3;
inline constexpr size_t kMatMulBiasSumInput = 3;

class ReferenceRegistry;
void RegisterMatMulBiasReference(ReferenceRegistry& registry);
void RegisterAttentionReference(ReferenceRegistry& registry);

bool IsQtuneOp(const ir::Node& node, const char* op_type);
inline bool IsFusedConv(const ir::Node& node) { return IsQtuneOp(node, "FusedConv"); }

// An elementwise activation that can follow a fused producer.
struct Activation {
  std::string op;             // "" for none
  std::vector<float> params;  // see above
  float post_scale = 1.0f;    // applied after the activation
  float post_shift = 0.0f;
  bool has_post_linear() const { return post_scale != 1.0f || post_shift != 0.0f; }
};

// True for the ONNX activations a fused producer can absorb (Relu, LeakyRelu, Clip,
// Sigmoid, HardSigmoid, HardSwish, Tanh). Clip also needs constant min/max (the fusion
// selector checks that).
bool IsFusibleActivation(const ir::Node& node);
// The activation an ONNX node computes, if a fused producer can absorb it (Clip only with
// constant bounds).
std::optional<Activation> ActivationOf(const ir::Node& node, int64_t opset);
// ActivationOf plus Gelu (op "Gelu" for the erf form, "GeluTanh" for approximate="tanh"),
// which only the matmul kernels (oneDNN eltwise_gelu_* post-op, native GEMV) run fused.
std::optional<Activation> MatMulActivationOf(const ir::Node& node, int64_t opset);
Activation ReadActivation(const ir::Node& fused_node);
// Applies `activation` in place to n floats.
void ApplyActivation(const Activation& activation, float* data, int64_t n);

}  // namespace qtune::runtime
