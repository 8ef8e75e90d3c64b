// oneDNN fp32 1-, 2- and 3-D convolution: Conv and the fused qtune::FusedConv (bias,
// residual sum and activation as post-ops). Activations in the layout WindowLayout gives
// their rank (rank 4 kNhwc, ranks 3 and 5 plain); weights reordered once at creation into
// the layout the primitive chose.
#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/onednn_post_ops.h"
#include "runtime/kernels/onednn_weighted_kernel.h"

namespace qtune::runtime {

using dnnl::memory;

StatusOr<std::optional<KernelChoice>> CreateOnednnConvKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  bool fused = IsFusedConv(node);
  if (!fused && !(node.op_type() == "Conv" && node.domain().empty())) return NotApplicable();
  if (request.inputs.size() < 2 || request.inputs[0] == nullptr || request.inputs[1] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& w = *request.inputs[1];
  const ValueInfo* b = request.input(2);
  const ValueInfo* sum = request.input(kFusedConvSumInput);
  const size_t rank = x.sizes.size();
  if (x.dtype != DataType::kFloat32 || w.dtype != DataType::kFloat32 ||
      !onednn::IsWindowRank(rank) || w.sizes.size() != rank || !w.has_constant() ||
      (b != nullptr && !b->has_constant()) || request.outputs.empty() ||
      request.outputs[0] == nullptr || request.outputs[0]->sizes.size() != rank ||
      !onednn::WindowAttributesFit(node, rank - 2)) {
    return NotApplicable();
  }
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  int64_t group = node.GetInt("group", 1);
  if (group <= 0 || w.sizes[0] % group != 0) return NotApplicable();
  onednn::ConvGeometry geo = onednn::ComputeConvGeometry(node, x.sizes, w.sizes, y);
  const Layout layout = onednn::WindowLayout(rank);
  const memory::format_tag act_tag = onednn::WindowTag(rank);
  onednn::SetThreads(request.threads);
  try {
    memory::dims w_dims = onednn::ToDims(w.sizes);
    if (group > 1) {
      w_dims[0] /= group;
      w_dims.insert(w_dims.begin(), group);
    }
    const memory::format_tag w_plain_tag = onednn::WeightsTag(rank, group > 1, false);
    const bool bf16 = request.precision == Precision::kBfloat16;
    const memory::data_type compute = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    memory::desc stored_src(onednn::ToDims(x.sizes), memory::data_type::f32, act_tag);
    memory::desc src_md(onednn::ToDims(x.sizes), compute, act_tag);
    memory::desc dst_md(onednn::ToDims(y), memory::data_type::f32, act_tag);
    memory::desc w_any(w_dims, compute, memory::format_tag::any);
    memory::desc b_md({w.sizes[0]}, memory::data_type::f32, memory::format_tag::a);
    auto desc =
        b != nullptr
            ? dnnl::convolution_forward::desc(
                  dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                  w_any, b_md, dst_md, geo.strides, geo.dilations, geo.pad_begin, geo.pad_end)
            : dnnl::convolution_forward::desc(
                  dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                  w_any, dst_md, geo.strides, geo.dilations, geo.pad_begin, geo.pad_end);
    dnnl::post_ops post_ops;
    if (sum != nullptr) post_ops.append_sum(1.0f);
    if (fused) {
      ASSIGN_OR_RETURN(bool appended, AppendActivation(node, post_ops));
      if (!appended) return NotApplicable(request, "its activation is not a oneDNN post-op");
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(post_ops);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, onednn::Engine());
    std::string impl = onednn::ImplName(pd);
    if (onednn::IsReferenceImpl(impl)) {
      return NotApplicable(request,
                           "oneDNN offers only its slow reference implementation (" + impl + ")");
    }
    memory::desc w_plain(w_dims, memory::data_type::f32, w_plain_tag);
    ASSIGN_OR_RETURN(memory weights,
                     onednn::ReorderConstant(w.constant, w_plain, pd.weights_desc()));
    std::optional<memory> bias;
    if (b != nullptr) {
      ASSIGN_OR_RETURN(bias, onednn::ReorderConstant(b->constant, b_md, b_md));
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnWeightedKernel>(
        dnnl::convolution_forward(pd), "onednn:" + impl, stored_src, pd.dst_desc(),
        std::move(weights), std::move(bias),
        sum != nullptr ? static_cast<int>(kFusedConvSumInput) : -1,
        bf16 ? std::optional<memory::desc>(pd.src_desc()) : std::nullopt);
    choice.precision = request.precision;
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.input_layouts[0] = layout;
    if (sum != nullptr) {
      choice.input_layouts[kFusedConvSumInput] = layout;
      choice.inplace_input = static_cast<int>(kFusedConvSumInput);
    }
    choice.output_layouts = {layout};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnConvKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_conv",
                     .ops = {{"", "Conv"}, {"qtune", "FusedConv"}},
                     .input_dtypes = {DataType::kFloat32},
                     .reads = {Layout::kNhwc, Layout::kPlain},
                     .factory = &CreateOnednnConvKernel});
}

}  // namespace qtune::runtime
