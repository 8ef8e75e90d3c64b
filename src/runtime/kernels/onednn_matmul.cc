// oneDNN fp32 matrix products: Gemm, MatMul and qtune::MatMulBias whose second operand is
// a constant (the weights, prepacked once at creation into the layout the primitive
// prefers). The first
// operand's leading dimensions are collapsed into rows: [.., M, K] x [K, N] -> [.., M, N].
#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/gelu_erf.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_post_ops.h"
#include "runtime/kernels/onednn_weighted_kernel.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

// What the primitive computes: dst[M,N] = alpha * src[M,K] x W[K,N] + bias (bias [1,N] or
// [M,N], already multiplied by beta).
struct MatMulProblem {
  int64_t m = 0, k = 0, n = 0;
  bool weights_transposed = false;  // W is stored [N,K]
  float alpha = 1.0f;
  Tensor bias;  // float32, [N] or [M,N]; invalid for none
};

StatusOr<std::optional<MatMulProblem>> DescribeGemm(const KernelRequest& r) {
  const ir::Node& node = r.node;
  if (node.GetInt("transA", 0) != 0) return std::optional<MatMulProblem>();
  const auto& a = r.inputs[0]->sizes;
  const auto& b = r.inputs[1]->sizes;
  MatMulProblem p;
  p.weights_transposed = node.GetInt("transB", 0) != 0;
  p.m = a[0];
  p.k = a[1];
  p.n = p.weights_transposed ? b[0] : b[1];
  p.alpha = node.GetFloat("alpha", 1.0f);
  float beta = node.GetFloat("beta", 1.0f);
  const ValueInfo* c = r.inputs.size() > 2 ? r.inputs[2] : nullptr;
  if (c != nullptr && beta != 0.0f) {
    if (!c->has_constant() || c->dtype != DataType::kFloat32) return std::optional<MatMulProblem>();
    int64_t count = c->constant.num_elements();
    bool row = count == p.n && (c->sizes.size() == 1 || (c->sizes.size() == 2 && c->sizes[0] == 1));
    bool full = c->sizes == std::vector<int64_t>{p.m, p.n};
    if (!row && !full) return std::optional<MatMulProblem>();
    // oneDNN scales the whole result by alpha, bias included: pre-divide beta*C by alpha.
    if (p.alpha == 0.0f) return std::optional<MatMulProblem>();
    ASSIGN_OR_RETURN(p.bias, Tensor::Allocate(DataType::kFloat32, {full ? p.m : 1, p.n}));
    for (int64_t i = 0; i < count; ++i) {
      p.bias.data<float>()[i] = c->constant.data<float>()[i] * beta / p.alpha;
    }
  }
  return std::optional<MatMulProblem>(std::move(p));
}

std::optional<MatMulProblem> DescribeMatMul(const KernelRequest& r) {
  const auto& a = r.inputs[0]->sizes;
  const auto& b = r.inputs[1]->sizes;
  if (a.size() < 2 || b.size() != 2 || a.back() != b[0]) return std::nullopt;
  MatMulProblem p;
  p.k = b[0];
  p.n = b[1];
  p.m = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i) p.m *= a[i];
  return p;
}

// The matmul, then GeluErf over its output in place: on AVX-512 CPUs that pass costs about
// half of what oneDNN 2.6's eltwise_gelu_erf post-op adds to the matmul (gelu_erf.h).
class MatMulThenGeluKernel : public Kernel {
 public:
  MatMulThenGeluKernel(std::unique_ptr<Kernel> matmul, int threads)
      : matmul_(std::move(matmul)), threads_(threads) {}
  std::string Describe() const override { return matmul_->Describe() + "+native:gelu_erf"; }
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    RETURN_IF_ERROR(matmul_->Run(inputs, outputs));
    float* y = outputs[0].data<float>();
    GeluErf(y, y, outputs[0].num_elements(), threads_);
    return Status::Ok();
  }

 private:
  std::unique_ptr<Kernel> matmul_;
  int threads_;
};

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnMatMulKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  bool gemm = node.op_type() == "Gemm";
  bool with_bias = IsQtuneOp(node, "MatMulBias");  // MatMul + constant bias [N]
  if (!with_bias && (!node.domain().empty() || (!gemm && node.op_type() != "MatMul"))) {
    return NotApplicable();
  }
  if (request.inputs.size() < 2 || request.inputs[0] == nullptr || request.inputs[1] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& a = *request.inputs[0];
  const ValueInfo& b = *request.inputs[1];
  if (a.dtype != DataType::kFloat32 || b.dtype != DataType::kFloat32) return NotApplicable();
  if (!b.has_constant()) return NotApplicable(request, "B is computed at run time, not a constant");
  std::optional<MatMulProblem> problem;
  if (gemm) {
    ASSIGN_OR_RETURN(problem, DescribeGemm(request));
  } else {
    problem = DescribeMatMul(request);
  }
  if (!problem) return NotApplicable();
  if (with_bias) {
    const ValueInfo* bias = request.input(2);
    if (bias == nullptr || !bias->has_constant() || bias->constant.num_elements() != problem->n ||
        bias->dtype != DataType::kFloat32) {
      return NotApplicable();
    }
    ASSIGN_OR_RETURN(problem->bias, bias->constant.Reshaped({1, problem->n}));
  }
  const ValueInfo* sum = with_bias ? request.input(kMatMulBiasSumInput) : nullptr;
  if (sum != nullptr &&
      (sum->dtype != DataType::kFloat32 || nn::Product(sum->sizes) != problem->m * problem->n)) {
    return NotApplicable(request, "Sum does not have the product's sizes");
  }
  const MatMulProblem& p = *problem;
  onednn::SetThreads(request.threads);
  try {
    using tag = memory::format_tag;
    const bool bf16 = request.precision == Precision::kBfloat16;
    const memory::data_type compute = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    memory::desc stored_src({p.m, p.k}, memory::data_type::f32, tag::ab);
    memory::desc src_md({p.m, p.k}, compute, tag::ab);
    memory::desc dst_md({p.m, p.n}, memory::data_type::f32, tag::ab);
    memory::desc w_any({p.k, p.n}, compute, tag::any);
    memory::desc w_plain({p.k, p.n}, memory::data_type::f32,
                         p.weights_transposed ? tag::ba : tag::ab);
    std::optional<memory::desc> bias_md;
    if (p.bias.is_valid()) {
      bias_md = memory::desc(onednn::ToDims(p.bias.sizes()), memory::data_type::f32, tag::ab);
    }
    auto desc = bias_md ? dnnl::matmul::desc(src_md, w_any, *bias_md, dst_md)
                        : dnnl::matmul::desc(src_md, w_any, dst_md);
    dnnl::primitive_attr attr;
    if (p.alpha != 1.0f) attr.set_output_scales(0, {p.alpha});
    const Activation activation = ReadActivation(node);
    const bool gelu_after =
        with_bias && activation.op == "Gelu" && !activation.has_post_linear() && GeluErfUseAvx512();
    if (with_bias) {
      dnnl::post_ops post_ops;
      if (sum != nullptr) post_ops.append_sum(1.0f);  // before the activation
      if (!gelu_after) {
        ASSIGN_OR_RETURN(bool appended, AppendActivation(node, post_ops));
        if (!appended) return NotApplicable();
      }
      attr.set_post_ops(post_ops);
    }
    dnnl::matmul::primitive_desc pd(desc, attr, onednn::Engine());
    if (onednn::IsReferenceImpl(onednn::ImplName(pd))) {
      return NotApplicable(request, "oneDNN offers only its slow reference implementation (" +
                                        onednn::ImplName(pd) + ")");
    }
    ASSIGN_OR_RETURN(memory weights,
                     onednn::ReorderConstant(b.constant, w_plain, pd.weights_desc()));
    std::optional<memory> bias;
    if (bias_md) {
      ASSIGN_OR_RETURN(bias, onednn::ReorderConstant(p.bias, *bias_md, *bias_md));
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnWeightedKernel>(
        dnnl::matmul(pd), "onednn:matmul:" + onednn::ImplName(pd), stored_src, pd.dst_desc(),
        std::move(weights), std::move(bias),
        sum != nullptr ? static_cast<int>(kMatMulBiasSumInput) : -1,
        bf16 ? std::optional<memory::desc>(pd.src_desc()) : std::nullopt);
    if (gelu_after) {
      choice.kernel =
          std::make_unique<MatMulThenGeluKernel>(std::move(choice.kernel), request.threads);
    }
    choice.precision = request.precision;
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.output_layouts = {Layout::kPlain};
    if (sum != nullptr) choice.inplace_input = static_cast<int>(kMatMulBiasSumInput);
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnMatMulKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_matmul",
                     .priority = 200,
                     .ops = {{"", "MatMul"}, {"", "Gemm"}, {"qtune", "MatMulBias"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateOnednnMatMulKernel});
}

}  // namespace qtune::runtime
