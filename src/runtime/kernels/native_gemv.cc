// Native fp32 MatMul, Gemm and qtune::MatMulBias with constant weights and at most
// kGemvMaxRows rows (batch-1 and small-batch fully connected layers): the weights packed
// once at creation (native_gemv_packed.h), each run one stream over them with the bias and
// ReLU applied in registers; a MatMulBias Sum and other activations run over the few output
// rows afterwards.
// Larger M is a matrix product and stays with oneDNN (onednn_matmul.cc).
#include <algorithm>
#include <optional>
#include <string>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/native_gemv_packed.h"
#include "runtime/kernels/packed_gemv_kernel.h"

namespace qtune::runtime {
namespace {

// y[M,N] = x[M,K] x (alpha * W) + bias, with bias = beta * C for Gemm.
struct GemvProblem {
  int64_t m = 0, k = 0, n = 0;
  bool transposed = false;  // W stored [N,K] (Gemm transB)
  float alpha = 1.0f;
  std::vector<float> bias;  // N floats, or empty
};

// Gemm with transA 0 and C absent, or a constant row of N (beta folded in).
std::optional<GemvProblem> DescribeGemm(const KernelRequest& r) {
  const ir::Node& node = r.node;
  const auto& a = r.inputs[0]->sizes;
  const auto& b = r.inputs[1]->sizes;
  if (node.GetInt("transA", 0) != 0 || a.size() != 2 || b.size() != 2) return std::nullopt;
  GemvProblem p;
  p.transposed = node.GetInt("transB", 0) != 0;
  p.m = a[0];
  p.k = a[1];
  p.n = p.transposed ? b[0] : b[1];
  if ((p.transposed ? b[1] : b[0]) != p.k) return std::nullopt;
  p.alpha = node.GetFloat("alpha", 1.0f);
  const float beta = node.GetFloat("beta", 1.0f);
  const ValueInfo* c = r.inputs.size() > 2 ? r.inputs[2] : nullptr;
  if (c == nullptr || beta == 0.0f) return p;
  if (!c->has_constant() || c->dtype != DataType::kFloat32) return std::nullopt;
  const bool row = c->constant.num_elements() == p.n &&
                   (c->sizes.size() == 1 || (c->sizes.size() == 2 && c->sizes[0] == 1));
  if (!row) return std::nullopt;
  const float* values = c->constant.data<float>();
  p.bias.assign(values, values + p.n);
  for (float& v : p.bias) v *= beta;
  return p;
}

// MatMul / MatMulBias: A [.., M, K] x W [K, N]; the leading dims of A are rows.
std::optional<GemvProblem> DescribeMatMul(const KernelRequest& r) {
  const auto& a = r.inputs[0]->sizes;
  const auto& b = r.inputs[1]->sizes;
  if (a.size() < 2 || b.size() != 2 || a.back() != b[0]) return std::nullopt;
  GemvProblem p;
  p.k = b[0];
  p.n = b[1];
  p.m = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i) p.m *= a[i];
  return p;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateNativeGemvKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  const bool gemm = node.domain().empty() && node.op_type() == "Gemm";
  const bool matmul = node.domain().empty() && node.op_type() == "MatMul";
  const bool with_bias = IsQtuneOp(node, "MatMulBias");
  if (!gemm && !matmul && !with_bias) return NotApplicable();
  if (request.inputs.size() < 2 || request.inputs[0] == nullptr || request.inputs[1] == nullptr ||
      request.outputs.empty() || request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& a = *request.inputs[0];
  const ValueInfo& b = *request.inputs[1];
  if (a.dtype != DataType::kFloat32 || b.dtype != DataType::kFloat32) return NotApplicable();
  if (!b.has_constant()) return NotApplicable(request, "B is computed at run time, not a constant");
  if (request.precision != Precision::kFloat32) {
    return NotApplicable(request, "computes in fp32 only (bf16 asked)");
  }
  const std::optional<GemvIsa> isa = BestGemvIsa();
  if (!isa) return NotApplicable(request, "needs AVX-512F, or AVX2 with FMA");
  std::optional<GemvProblem> problem = gemm ? DescribeGemm(request) : DescribeMatMul(request);
  if (!problem) return NotApplicable();
  GemvProblem& p = *problem;
  if (p.m > kGemvMaxRows) {
    return NotApplicable(request, std::to_string(p.m) + " rows: more than " +
                                      std::to_string(kGemvMaxRows) +
                                      ", a matrix product rather than matrix-vector");
  }
  if (p.m < 1 || p.k < 1 || p.n < 1) return NotApplicable(request, "an empty dimension");
  if (request.outputs[0]->sizes.empty() || request.outputs[0]->dtype != DataType::kFloat32) {
    return NotApplicable();
  }
  Activation activation;
  if (with_bias) {
    const ValueInfo* bias = request.input(2);
    if (bias == nullptr || !bias->has_constant() || bias->dtype != DataType::kFloat32 ||
        bias->constant.num_elements() != p.n) {
      return NotApplicable();
    }
    const float* values = bias->constant.data<float>();
    p.bias.assign(values, values + p.n);
    activation = ReadActivation(node);
  }
  const ValueInfo* sum = with_bias ? request.input(kMatMulBiasSumInput) : nullptr;
  if (sum != nullptr &&
      (sum->dtype != DataType::kFloat32 || sum->sizes != request.outputs[0]->sizes)) {
    return NotApplicable(request, "Sum does not have the product's sizes");
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<PackedGemvWeights> packed,
      PackedGemvWeights::Pack(b.constant.data<float>(), p.k, p.n, p.transposed, p.alpha));
  KernelChoice choice;
  GemvOptions options;
  options.threads = std::max(1, request.threads);
  options.isa = *isa;
  choice.kernel = std::make_unique<PackedGemvKernel<PackedGemvWeights>>(
      "native:gemv:", &RunGemv, std::move(packed), std::move(p.bias), std::move(activation), p.m,
      options, sum != nullptr ? static_cast<int>(kMatMulBiasSumInput) : -1);
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  choice.output_layouts = {Layout::kPlain};
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterNativeGemvKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_gemv",
                     .tier = KernelTier::kNative,
                     .priority = 210,
                     .ops = {{"", "MatMul"}, {"", "Gemm"}, {"qtune", "MatMulBias"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateNativeGemvKernel});
}

}  // namespace qtune::runtime
