// The reference kernel tier: a plain, obviously-correct implementation of every op qtune
// runs. It is the fallback when no fast kernel applies, the oracle that fast kernels are
// tested against, and the evaluator the constant-folding pass uses.
//
// Reference kernels allocate their outputs. They read attributes from the node, apply
// ONNX semantics for the given opset (including defaults and broadcasting), and return
// InvalidArgument/Unimplemented naming the node for anything they do not support.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime {

struct KernelArgs {
  const ir::Node& node;
  // One per node input; an omitted optional input is an invalid Tensor (is_valid() false).
  std::span<const Tensor> inputs;
  int64_t opset;  // version of the default ONNX domain the graph imports
};

using ReferenceKernel = StatusOr<std::vector<Tensor>> (*)(const KernelArgs& args);

class ReferenceRegistry {
 public:
  // The registry with every reference kernel qtune has. Built once, immutable.
  static const ReferenceRegistry& Get();

  // Ops of the default ONNX domain register by op type; qtune's own fused ops (domain
  // "qtune") as "qtune::<op type>".
  void Register(std::string op_type, ReferenceKernel kernel);
  // Null when the op (in the default ONNX domain) has no reference kernel.
  ReferenceKernel Find(std::string_view op_type) const;
  // The kernel for `node`'s domain and op type; null for other domains or unknown ops.
  ReferenceKernel FindFor(const ir::Node& node) const;
  std::vector<std::string> OpTypes() const;  // sorted

 private:
  std::unordered_map<std::string, ReferenceKernel> kernels_;
};

// Kernel groups, one per source file family; each adds its ops to the registry.
void RegisterElementwiseKernels(ReferenceRegistry& registry);  // unary, binary, Where, Clip...
void RegisterShapeKernels(ReferenceRegistry& registry);        // Reshape, Concat, Gather, Slice...
void RegisterReductionKernels(ReferenceRegistry& registry);    // Reduce*, ArgMax...
void RegisterNnKernels(ReferenceRegistry& registry);     // Conv, pools, Gemm, MatMul, norms...
void RegisterFusedKernels(ReferenceRegistry& registry);  // qtune::FusedConv (runtime/fusion)
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (quant_linear.cc); ConvInteger,
// MatMulInteger, QLinearConv, QLinearMatMul (quant_integer.cc).
void RegisterQuantKernels(ReferenceRegistry& registry);
// DFT, STFT, HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix (signal_*.cc).
void RegisterSignalKernels(ReferenceRegistry& registry);
void RegisterSamplingKernels(ReferenceRegistry& registry);  // GridSample, RoiAlign (sampling_*.cc)
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (loss_nll.cc).
void RegisterLossKernels(ReferenceRegistry& registry);
// Shrink, BitShift, EyeLike, ReverseSequence, MeanVarianceNormalization, MaxUnpool, Det,
// Einsum (reference/misc_kernels.h).
void RegisterMiscKernels(ReferenceRegistry& registry);

// Runs one node with its reference kernel. Unimplemented (naming op type, node name and
// opset) if there is none; domains other than ONNX's and qtune's are never supported here.
StatusOr<std::vector<Tensor>> EvaluateNode(const ir::Node& node, std::span<const Tensor> inputs,
                                           int64_t opset);

}  // namespace qtune::runtime
