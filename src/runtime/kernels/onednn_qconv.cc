// oneDNN int8 2-D convolution for qtune::QConv (quant_ops.h): src u8|s8 in kNhwc, weights
// s8 (W minus its zero points, which must fit int8) reordered once at creation, dst
// u8|s8|f32 in kNhwc. Scales and zero points are constants baked into the primitive; the
// attribute recipe is in onednn_quant_primitive.h. Anything oneDNN cannot run on a JIT
// kernel is NotApplicable, and the integer reference runs instead.
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/onednn_quant_primitive.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;
using namespace qlinear;

// oneDNN 2.6.3's "jit:avx512_core_amx_int8" convolution computes the src zero-point
// compensation wrongly at padded borders when the kernel is dilated (off by tens of LSB;
// OnednnQConv.GeometryEdges pins it). The next implementation oneDNN offers is used then.
bool IsKnownWrong(const std::string& impl, const QuantLinearParams& p,
                  const onednn::ConvGeometry& g) {
  if (impl.rfind("jit:", 0) != 0 || impl.find("amx") == std::string::npos) return false;
  bool dilated = false, padded = false;
  for (size_t i = 0; i < g.dilations.size(); ++i) {
    dilated = dilated || g.dilations[i] > 0;
    padded = padded || g.pad_begin[i] > 0 || g.pad_end[i] > 0;
  }
  return p.x_zero_point != 0 && dilated && padded;
}

// What the primitive descriptor is made of (all but the attributes).
struct ConvDescs {
  memory::desc src, dst, bias;
  memory::dims w_dims;
  memory::format_tag w_plain = memory::format_tag::oihw;
  onednn::ConvGeometry geo;
};

// The primitive descriptor of the first implementation oneDNN offers that is neither a
// reference kernel nor known to be wrong; nullopt when there is none.
std::optional<dnnl::convolution_forward::primitive_desc> CreatePrimitiveDesc(
    const ConvDescs& d, const QuantPrimitiveAttributes& attrs, const QuantLinearParams& params) {
  memory::desc w_any(d.w_dims, memory::data_type::s8, memory::format_tag::any);
  const onednn::ConvGeometry& g = d.geo;
  auto desc =
      attrs.bias.empty()
          ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::convolution_direct, d.src, w_any,
                                            d.dst, g.strides, g.dilations, g.pad_begin, g.pad_end)
          : dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, d.src,
                w_any, d.bias, d.dst, g.strides, g.dilations, g.pad_begin, g.pad_end);
  try {
    dnnl::convolution_forward::primitive_desc pd(desc, attrs.attr, onednn::Engine());
    for (;;) {
      std::string impl = onednn::ImplName(pd);
      if (onednn::IsReferenceImpl(impl)) return std::nullopt;
      if (!IsKnownWrong(impl, params, g)) return pd;
      if (!pd.next_impl()) return std::nullopt;
    }
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) return std::nullopt;
    throw;
  }
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnQConvKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (!IsQtuneOp(node, kQConv)) return NotApplicable();
  auto input = [&](size_t i) { return i < request.inputs.size() ? request.inputs[i] : nullptr; };
  const ValueInfo* x = input(kX);
  const ValueInfo* w = input(kW);
  const ValueInfo* sum = input(kSum);
  if (x == nullptr || w == nullptr || !w->has_constant() || x->sizes.size() != 4 ||
      w->sizes.size() != 4 || !IsInt8OrUint8(x->dtype) || request.outputs.empty() ||
      request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  const int64_t channels = w->sizes[0];
  const int64_t group = node.GetInt("group", 1);
  if (y.size() != 4 || group <= 0 || channels % group != 0) return NotApplicable();
  if (sum != nullptr && sum->sizes != y) return NotApplicable();
  ASSIGN_OR_RETURN(std::optional<QuantLinearParams> params, ReadRequestParams(request, channels));
  if (!params) return NotApplicable();
  std::optional<Tensor> weights_s8 = CenteredInt8Weights(
      w->constant, params->w_zero_point, w->sizes[1] * w->sizes[2] * w->sizes[3], channels);
  if (!weights_s8) return NotApplicable();
  onednn::SetThreads(request.threads);
  try {
    using tag = memory::format_tag;
    using dt = memory::data_type;
    memory::desc sum_md;
    if (sum != nullptr) {
      ASSIGN_OR_RETURN(dt sum_type, onednn::ToDnnl(sum->dtype));
      sum_md = memory::desc(onednn::ToDims(y), sum_type, tag::nhwc);
    }
    ConvDescs d;
    d.geo = onednn::ComputeConvGeometry(node, x->sizes, w->sizes, y);
    d.w_dims = onednn::ToDims(w->sizes);
    if (group > 1) {
      d.w_dims = {group, channels / group, w->sizes[1], w->sizes[2], w->sizes[3]};
      d.w_plain = tag::goihw;
    }
    ASSIGN_OR_RETURN(dt src_type, onednn::ToDnnl(x->dtype));
    d.src = memory::desc(onednn::ToDims(x->sizes), src_type, tag::nhwc);
    d.bias = memory::desc({channels}, dt::f32, tag::a);
    // The sum post-op's zero point first; folded into the bias when no JIT kernel takes it.
    std::optional<QuantPrimitiveAttributes> attrs;
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    for (bool fold : {false, true}) {
      attrs =
          MakeQuantAttributes(node, *params, {.sum_desc = sum_md, .sum_zero_point_in_bias = fold});
      if (!attrs) return NotApplicable();
      d.dst = memory::desc(onednn::ToDims(y), attrs->dst_type, tag::nhwc);
      pd = CreatePrimitiveDesc(d, *attrs, *params);
      if (pd || params->sum != QuantSumKind::kQuantized || params->sum_zero_point == 0) break;
    }
    if (!pd) return NotApplicable();
    const std::string impl = onednn::ImplName(*pd);
    const bool has_bias = !attrs->bias.empty();
    OnednnQuantKernel::Parts parts;
    ASSIGN_OR_RETURN(parts.weights,
                     onednn::ReorderConstant(*weights_s8, memory::desc(d.w_dims, dt::s8, d.w_plain),
                                             pd->weights_desc()));
    if (has_bias) {
      ASSIGN_OR_RETURN(parts.bias,
                       onednn::ReorderConstant(Tensor::FromVector<float>({channels}, attrs->bias),
                                               d.bias, d.bias));
    }
    parts.primitive = dnnl::convolution_forward(*pd);
    parts.name = "onednn:" + impl;
    parts.src = pd->src_desc();
    parts.dst = pd->dst_desc();
    parts.sum = sum_md;
    parts.sum_in_dst = attrs->sum_in_dst;
    parts.sum_binary = attrs->sum_binary;
    parts.sum_dequantized = attrs->sum_dequantized;
    parts.sum_scale = params->sum_scale;
    parts.sum_zero_point = params->sum_zero_point;
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnQuantKernel>(std::move(parts));
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.input_layouts[kX] = Layout::kNhwc;
    if (sum != nullptr) {
      choice.input_layouts[kSum] = Layout::kNhwc;
      if (attrs->sum_in_dst && sum->dtype == request.outputs[0]->dtype) {
        choice.inplace_input = static_cast<int>(kSum);
      }
    }
    choice.output_layouts = {Layout::kNhwc};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnQConvKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_qconv",
                     .ops = {{"qtune", "QConv"}},
                     .input_dtypes = {DataType::kInt8, DataType::kUint8},
                     .reads = {Layout::kNhwc},
                     .factory = &CreateOnednnQConvKernel});
}

}  // namespace qtune::runtime
