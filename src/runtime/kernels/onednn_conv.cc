// oneDNN fp32 2-D convolution: Conv and the fused qtune::FusedConv (bias, residual sum and
// activation as post-ops). Activations in kNhwc; weights reordered once at creation into
// the layout the primitive chose.
#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
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
  const ValueInfo* b = request.inputs.size() > 2 ? request.inputs[2] : nullptr;
  const ValueInfo* sum =
      request.inputs.size() > kFusedConvSumInput ? request.inputs[kFusedConvSumInput] : nullptr;
  if (x.dtype != DataType::kFloat32 || w.dtype != DataType::kFloat32 || x.sizes.size() != 4 ||
      !w.has_constant() || (b != nullptr && !b->has_constant())) {
    return NotApplicable();
  }
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  int64_t group = node.GetInt("group", 1);
  onednn::ConvGeometry geo = onednn::ComputeConvGeometry(node, x.sizes, w.sizes, y);
  onednn::SetThreads(request.threads);
  try {
    memory::dims w_dims = onednn::ToDims(w.sizes);
    memory::format_tag w_plain_tag = memory::format_tag::oihw;
    if (group > 1) {
      w_dims = {group, w.sizes[0] / group, w.sizes[1], w.sizes[2], w.sizes[3]};
      w_plain_tag = memory::format_tag::goihw;
    }
    memory::desc src_md(onednn::ToDims(x.sizes), memory::data_type::f32, memory::format_tag::nhwc);
    memory::desc dst_md(onednn::ToDims(y), memory::data_type::f32, memory::format_tag::nhwc);
    memory::desc w_any(w_dims, memory::data_type::f32, memory::format_tag::any);
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
      if (!appended) return NotApplicable();
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(post_ops);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, onednn::Engine());
    std::string impl = onednn::ImplName(pd);
    if (onednn::IsReferenceImpl(impl)) return NotApplicable();
    memory::desc w_plain(w_dims, memory::data_type::f32, w_plain_tag);
    ASSIGN_OR_RETURN(memory weights,
                     onednn::ReorderConstant(w.constant, w_plain, pd.weights_desc()));
    std::optional<memory> bias;
    if (b != nullptr) {
      ASSIGN_OR_RETURN(bias, onednn::ReorderConstant(b->constant, b_md, b_md));
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnWeightedKernel>(
        dnnl::convolution_forward(pd), "onednn:" + impl, pd.src_desc(), pd.dst_desc(),
        std::move(weights), std::move(bias),
        sum != nullptr ? static_cast<int>(kFusedConvSumInput) : -1);
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.input_layouts[0] = Layout::kNhwc;
    if (sum != nullptr) {
      choice.input_layouts[kFusedConvSumInput] = Layout::kNhwc;
      choice.inplace_input = static_cast<int>(kFusedConvSumInput);
    }
    choice.output_layouts = {Layout::kNhwc};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) return NotApplicable();
    return onednn::FromDnnlError(e, node.DebugName());
  }
}

}  // namespace qtune::runtime
