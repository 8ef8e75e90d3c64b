// oneDNN fp32 2-D transposed convolution (ONNX ConvTranspose) on kNhwc activations, with
// constant weights reordered once at creation. ONNX weights are [C_in, C_out/group, kH, kW]
// (oneDNN calls that layout iohw / giohw).
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/onednn_weighted_kernel.h"

namespace qtune::runtime {

using dnnl::memory;

StatusOr<std::optional<KernelChoice>> CreateOnednnDeconvKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (node.op_type() != "ConvTranspose" || !node.domain().empty()) return NotApplicable();
  if (request.inputs.size() < 2 || !request.inputs[0] || !request.inputs[1]) return NotApplicable();
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& w = *request.inputs[1];
  const ValueInfo* b = request.inputs.size() > 2 ? request.inputs[2] : nullptr;
  if (x.dtype != DataType::kFloat32 || x.sizes.size() != 4 || !w.has_constant() ||
      w.dtype != DataType::kFloat32 || (b != nullptr && !b->has_constant())) {
    return NotApplicable();
  }
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  int64_t group = node.GetInt("group", 1);
  std::optional<onednn::ConvGeometry> geo =
      onednn::ComputeDeconvGeometry(node, x.sizes, w.sizes, y);
  if (!geo) return NotApplicable();
  onednn::SetThreads(request.threads);
  try {
    int64_t c_out = y[1];
    memory::dims w_dims = {c_out, w.sizes[0], w.sizes[2], w.sizes[3]};
    memory::format_tag w_tag = memory::format_tag::iohw;
    if (group > 1) {
      w_dims = {group, c_out / group, w.sizes[0] / group, w.sizes[2], w.sizes[3]};
      w_tag = memory::format_tag::giohw;
    }
    memory::desc src_md(onednn::ToDims(x.sizes), memory::data_type::f32, memory::format_tag::nhwc);
    memory::desc dst_md(onednn::ToDims(y), memory::data_type::f32, memory::format_tag::nhwc);
    memory::desc w_any(w_dims, memory::data_type::f32, memory::format_tag::any);
    memory::desc b_md({c_out}, memory::data_type::f32, memory::format_tag::a);
    auto alg = dnnl::algorithm::deconvolution_direct;
    auto prop = dnnl::prop_kind::forward_inference;
    auto desc = b != nullptr ? dnnl::deconvolution_forward::desc(
                                   prop, alg, src_md, w_any, b_md, dst_md, geo->strides,
                                   geo->dilations, geo->pad_begin, geo->pad_end)
                             : dnnl::deconvolution_forward::desc(prop, alg, src_md, w_any, dst_md,
                                                                 geo->strides, geo->dilations,
                                                                 geo->pad_begin, geo->pad_end);
    dnnl::deconvolution_forward::primitive_desc pd(desc, onednn::Engine());
    if (onednn::IsReferenceImpl(onednn::ImplName(pd))) return NotApplicable();
    memory::desc w_plain(w_dims, memory::data_type::f32, w_tag);
    ASSIGN_OR_RETURN(memory weights,
                     onednn::ReorderConstant(w.constant, w_plain, pd.weights_desc()));
    std::optional<memory> bias;
    if (b != nullptr) {
      ASSIGN_OR_RETURN(bias, onednn::ReorderConstant(b->constant, b_md, b_md));
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnWeightedKernel>(
        dnnl::deconvolution_forward(pd), "onednn:deconv:" + onednn::ImplName(pd), pd.src_desc(),
        pd.dst_desc(), std::move(weights), std::move(bias));
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.input_layouts[0] = Layout::kNhwc;
    choice.output_layouts = {Layout::kNhwc};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) return NotApplicable();
    return onednn::FromDnnlError(e, node.DebugName());
  }
}

}  // namespace qtune::runtime
