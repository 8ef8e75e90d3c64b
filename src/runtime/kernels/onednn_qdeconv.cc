// oneDNN int8 2-D transposed convolution for qtune::QConvTranspose (quant_ops.h): src u8|s8
// in kNhwc, weights s8 (W minus its zero points, which must fit int8) reordered once at
// creation, dst u8|s8|f32 in kNhwc. Scales, zero points and the bias follow the QConv
// recipe (onednn_quant_primitive.h); the output scales are per dst channel, so their mask
// (1 << 1) does not depend on the grouped weight layout. Anything oneDNN cannot run on a
// JIT kernel is NotApplicable, and the reference runs instead.
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/onednn_quant_primitive.h"

namespace qtune::runtime {

using dnnl::memory;
using namespace qlinear;

StatusOr<std::optional<KernelChoice>> CreateOnednnQDeconvKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (!IsQtuneOp(node, kQConvTranspose)) return NotApplicable();
  auto input = [&](size_t i) { return i < request.inputs.size() ? request.inputs[i] : nullptr; };
  const ValueInfo* x = input(kX);
  const ValueInfo* w = input(kW);
  if (x == nullptr || w == nullptr || !w->has_constant() || x->sizes.size() != 4 ||
      w->sizes.size() != 4 || !IsInt8OrUint8(x->dtype) || input(kSum) != nullptr ||
      request.outputs.empty() || request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  const int64_t group = node.GetInt("group", 1);
  if (y.size() != 4 || group <= 0 || w->sizes[0] % group != 0) return NotApplicable();
  const int64_t c_in = w->sizes[0], c_out_group = w->sizes[1], c_out = c_out_group * group;
  if (y[1] != c_out || x->sizes[1] != c_in) return NotApplicable();
  ASSIGN_OR_RETURN(std::optional<QuantLinearParams> params, ReadRequestParams(request, c_out));
  if (!params) return NotApplicable();
  // W's element i belongs to channel (i / window) % c_out_group of its group; per-channel
  // zero points are only centred for group 1 (grouped layers need equal ones).
  const int64_t window = w->sizes[2] * w->sizes[3];
  std::vector<int32_t> zero_points = params->w_zero_point;
  if (group > 1) {
    for (int32_t z : zero_points) {
      if (z != zero_points[0]) return NotApplicable();
    }
    zero_points.resize(1);
  }
  std::optional<Tensor> weights_s8 = CenteredInt8Weights(w->constant, zero_points, window,
                                                         static_cast<int64_t>(zero_points.size()));
  if (!weights_s8) return NotApplicable();
  std::optional<onednn::ConvGeometry> geo =
      onednn::ComputeDeconvGeometry(node, x->sizes, w->sizes, y);
  if (!geo) return NotApplicable();
  onednn::SetThreads(request.threads);
  try {
    using tag = memory::format_tag;
    using dt = memory::data_type;
    // oneDNN orders deconvolution weights (O, I, H, W) logically; ONNX's [C_in, C_out, ...]
    // is its iohw (giohw per group).
    memory::dims w_dims = {c_out, c_in, w->sizes[2], w->sizes[3]};
    tag w_plain = tag::iohw;
    if (group > 1) {
      w_dims = {group, c_out_group, c_in / group, w->sizes[2], w->sizes[3]};
      w_plain = tag::giohw;
    }
    std::optional<QuantPrimitiveAttributes> attrs = MakeQuantAttributes(node, *params, {});
    if (!attrs) return NotApplicable();
    ASSIGN_OR_RETURN(dt src_type, onednn::ToDnnl(x->dtype));
    memory::desc src(onednn::ToDims(x->sizes), src_type, tag::nhwc);
    memory::desc dst(onednn::ToDims(y), attrs->dst_type, tag::nhwc);
    memory::desc bias_md({c_out}, dt::f32, tag::a);
    memory::desc w_any(w_dims, dt::s8, tag::any);
    const bool has_bias = !attrs->bias.empty();
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::deconvolution_direct;
    auto desc =
        has_bias
            ? dnnl::deconvolution_forward::desc(prop, alg, src, w_any, bias_md, dst, geo->strides,
                                                geo->dilations, geo->pad_begin, geo->pad_end)
            : dnnl::deconvolution_forward::desc(prop, alg, src, w_any, dst, geo->strides,
                                                geo->dilations, geo->pad_begin, geo->pad_end);
    dnnl::deconvolution_forward::primitive_desc pd(desc, attrs->attr, onednn::Engine());
    const std::string impl = onednn::ImplName(pd);
    if (onednn::IsReferenceImpl(impl)) {
      return NotApplicable(request,
                           "oneDNN offers only its slow reference implementation (" + impl + ")");
    }
    OnednnQuantKernel::Parts parts;
    ASSIGN_OR_RETURN(parts.weights,
                     onednn::ReorderConstant(*weights_s8, memory::desc(w_dims, dt::s8, w_plain),
                                             pd.weights_desc()));
    if (has_bias) {
      ASSIGN_OR_RETURN(parts.bias,
                       onednn::ReorderConstant(Tensor::FromVector<float>({c_out}, attrs->bias),
                                               bias_md, bias_md));
    }
    parts.primitive = dnnl::deconvolution_forward(pd);
    parts.name = "onednn:deconv:" + impl;
    parts.src = pd.src_desc();
    parts.dst = pd.dst_desc();
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnQuantKernel>(std::move(parts));
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.input_layouts[kX] = Layout::kNhwc;
    choice.output_layouts = {Layout::kNhwc};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnQDeconvKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_qdeconv",
                     .ops = {{"qtune", "QConvTranspose"}},
                     .input_dtypes = {DataType::kInt8, DataType::kUint8},
                     .reads = {Layout::kNhwc},
                     .factory = &CreateOnednnQDeconvKernel});
}

}  // namespace qtune::runtime
