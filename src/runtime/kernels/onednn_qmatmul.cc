// oneDNN int8 matmul for qtune::QMatMul (quant_ops.h): A u8|s8 [..., M, K] plain (leading
// dimensions collapsed into rows), W [K, N] constant (minus its zero points, which must fit
// int8) prepacked once at creation, dst u8|s8|f32 [..., M, N]. Scales and zero points are
// constants baked into the primitive (onednn_quant_primitive.h has the attribute recipe).
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_quant_primitive.h"

namespace qtune::runtime {

StatusOr<std::optional<KernelChoice>> CreateOnednnQMatMulKernel(const KernelRequest& request) {
  using namespace qlinear;
  using dnnl::memory;
  const ir::Node& node = request.node;
  if (!IsQtuneOp(node, kQMatMul)) return NotApplicable();
  auto input = [&](size_t i) { return i < request.inputs.size() ? request.inputs[i] : nullptr; };
  const ValueInfo* a = input(kX);
  const ValueInfo* w = input(kW);
  if (a == nullptr || w == nullptr || !w->has_constant() || a->sizes.size() < 2 ||
      w->sizes.size() != 2 || a->sizes.back() != w->sizes[0] || input(kSum) != nullptr ||
      (a->dtype != DataType::kUint8 && a->dtype != DataType::kInt8)) {
    return NotApplicable();
  }
  const int64_t k = w->sizes[0], n = w->sizes[1];
  int64_t m = 1;
  for (size_t i = 0; i + 1 < a->sizes.size(); ++i) m *= a->sizes[i];
  ASSIGN_OR_RETURN(std::optional<QuantLinearParams> params, ReadRequestParams(request, n));
  if (!params) return NotApplicable();
  std::optional<Tensor> weights_s8 = CenteredInt8Weights(w->constant, params->w_zero_point, 1, n);
  if (!weights_s8) return NotApplicable();
  onednn::SetThreads(request.threads);
  try {
    using tag = memory::format_tag;
    using dt = memory::data_type;
    std::optional<QuantPrimitiveAttributes> attrs =
        MakeQuantAttributes(node, *params, QuantAttributeOptions{});
    if (!attrs) return NotApplicable();
    ASSIGN_OR_RETURN(dt src_type, onednn::ToDnnl(a->dtype));
    memory::desc src_md({m, k}, src_type, tag::ab);
    memory::desc dst_md({m, n}, attrs->dst_type, tag::ab);
    memory::desc w_any({k, n}, dt::s8, tag::any);
    memory::desc b_md({1, n}, dt::f32, tag::ab);
    const bool has_bias = !attrs->bias.empty();
    auto desc = has_bias ? dnnl::matmul::desc(src_md, w_any, b_md, dst_md)
                         : dnnl::matmul::desc(src_md, w_any, dst_md);
    dnnl::matmul::primitive_desc pd(desc, attrs->attr, onednn::Engine());
    std::string impl = onednn::ImplName(pd);
    if (onednn::IsReferenceImpl(impl)) {
      return NotApplicable(request,
                           "oneDNN offers only its slow reference implementation (" + impl + ")");
    }
    OnednnQuantKernel::Parts parts;
    ASSIGN_OR_RETURN(parts.weights,
                     onednn::ReorderConstant(*weights_s8, memory::desc({k, n}, dt::s8, tag::ab),
                                             pd.weights_desc()));
    if (has_bias) {
      ASSIGN_OR_RETURN(parts.bias, onednn::ReorderConstant(
                                       Tensor::FromVector<float>({1, n}, attrs->bias), b_md, b_md));
    }
    parts.primitive = dnnl::matmul(pd);
    parts.name = "onednn:matmul:" + impl;
    parts.src = pd.src_desc();
    parts.dst = pd.dst_desc();
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnQuantKernel>(std::move(parts));
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.output_layouts = {Layout::kPlain};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnQMatMulKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_qmatmul",
                     .ops = {{"qtune", "QMatMul"}},
                     .input_dtypes = {DataType::kInt8, DataType::kUint8},
                     .factory = &CreateOnednnQMatMulKernel});
}

}  // namespace qtune::runtime
