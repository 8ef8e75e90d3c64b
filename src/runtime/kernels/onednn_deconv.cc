// oneDNN fp32 1-, 2- and 3-D transposed convolution (ONNX ConvTranspose), activations in
// the layout WindowLayout gives their rank (rank 4 kNhwc, ranks 3 and 5 plain), with
// constant weights reordered once at creation. ONNX weights are [C_in, C_out/group, k...]
// (oneDNN calls that layout iohw / giohw for 2-D).
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
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
  const ValueInfo* b = request.input(2);
  const size_t rank = x.sizes.size();
  if (x.dtype != DataType::kFloat32 || !onednn::IsWindowRank(rank) || w.sizes.size() != rank ||
      !w.has_constant() || w.dtype != DataType::kFloat32 || (b != nullptr && !b->has_constant()) ||
      request.outputs.empty() || request.outputs[0] == nullptr ||
      request.outputs[0]->sizes.size() != rank) {
    return NotApplicable(request,
                         "not a float32 1-3-D ConvTranspose with constant weights and bias");
  }
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  int64_t group = node.GetInt("group", 1);
  if (group <= 0 || w.sizes[0] % group != 0 || y[1] % group != 0) return NotApplicable();
  std::optional<onednn::ConvGeometry> geo =
      onednn::ComputeDeconvGeometry(node, x.sizes, w.sizes, y);
  if (!geo) return NotApplicable();
  onednn::SetThreads(request.threads);
  try {
    int64_t c_out = y[1];
    // oneDNN's logical weight dims are [(G,) O/G, I/G, k...]; the io* tags read ONNX's order.
    memory::dims w_dims = onednn::ToDims(w.sizes);
    w_dims[0] = c_out / group;
    w_dims[1] = w.sizes[0] / group;
    if (group > 1) w_dims.insert(w_dims.begin(), group);
    const memory::format_tag w_tag = onednn::WeightsTag(rank, group > 1, true);
    const memory::format_tag act_tag = onednn::WindowTag(rank);
    memory::desc src_md(onednn::ToDims(x.sizes), memory::data_type::f32, act_tag);
    memory::desc dst_md(onednn::ToDims(y), memory::data_type::f32, act_tag);
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
    if (onednn::IsReferenceImpl(onednn::ImplName(pd))) {
      return NotApplicable(request, "oneDNN offers only its slow reference implementation (" +
                                        onednn::ImplName(pd) + ")");
    }
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
    choice.input_layouts[0] = onednn::WindowLayout(rank);
    choice.output_layouts = {onednn::WindowLayout(rank)};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnDeconvKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_deconv",
                     .ops = {{"", "ConvTranspose"}},
                     .input_dtypes = {DataType::kFloat32},
                     .reads = {Layout::kNhwc, Layout::kPlain},
                     .factory = &CreateOnednnDeconvKernel});
}

}  // namespace qtune::runtime
