#include "runtime/kernels/onednn_quant_primitive.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/onednn_context.h"

namespace qtune::runtime {
namespace {

using alg = dnnl::algorithm;
using dt = dnnl::memory::data_type;

bool IsHomogeneous(const Activation& a) {
  return a.op.empty() || a.op == "Relu" || a.op == "LeakyRelu" || a.op == "Clip";
}

// A finite stand-in for an infinite clip bound (oneDNN's clip wants finite bounds).
float Finite(float v) { return std::isfinite(v) ? v : (v > 0 ? 3.4e38f : -3.4e38f); }

// Appends `a` for values v = real / d (d = 1, or d > 0 with a homogeneous `a`), followed by
// the linear map that turns post_linear(a(real)) / t into the dst domain. oneDNN 2.6's JIT
// injector keeps one eltwise injector per algorithm, so at most one eltwise_linear is
// appended (HardSigmoid's own linear absorbs the final map). False when oneDNN has no
// equivalent of the activation.
bool AppendScaledActivation(const Activation& a, float d, float t, dnnl::post_ops& ops) {
  auto param = [&](size_t i, float fallback) {
    return i < a.params.size() ? a.params[i] : fallback;
  };
  const float scale = a.post_scale * d / t, shift = a.post_shift / t;
  if (a.op.empty()) {
  } else if (a.op == "Relu") {
    ops.append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f);
  } else if (a.op == "LeakyRelu") {
    ops.append_eltwise(1.0f, alg::eltwise_relu, param(0, 0.01f), 0.0f);
  } else if (a.op == "Clip") {
    ops.append_eltwise(1.0f, alg::eltwise_clip, Finite(param(0, -INFINITY) / d),
                       Finite(param(1, INFINITY) / d));
  } else if (a.op == "Sigmoid") {
    ops.append_eltwise(1.0f, alg::eltwise_logistic, 0.0f, 0.0f);
  } else if (a.op == "HardSigmoid") {
    // scale*clip(alpha*x+beta, 0, 1)+shift == clip(scale*alpha*x+scale*beta+shift, lo, hi).
    ops.append_eltwise(1.0f, alg::eltwise_linear, scale * param(0, 0.2f),
                       scale * param(1, 0.5f) + shift);
    ops.append_eltwise(1.0f, alg::eltwise_clip, std::min(shift, scale + shift),
                       std::max(shift, scale + shift));
    return true;
  } else if (a.op == "HardSwish") {
    ops.append_eltwise(1.0f, alg::eltwise_hardswish, 0.0f, 0.0f);
  } else if (a.op == "Tanh") {
    ops.append_eltwise(1.0f, alg::eltwise_tanh, 0.0f, 0.0f);
  } else {
    return false;
  }
  if (scale != 1.0f || shift != 0.0f) ops.append_eltwise(1.0f, alg::eltwise_linear, scale, shift);
  return true;
}

// dst[i] = scale * (q[i] - zero_point) for an int8/uint8 q (same layout as dst).
void DequantizeInto(const Tensor& q, float scale, int32_t zero_point, float* dst) {
  const int64_t n = q.num_elements();
  if (q.dtype() == DataType::kUint8) {
    const uint8_t* src = q.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) dst[i] = scale * static_cast<float>(src[i] - zero_point);
  } else {
    const int8_t* src = q.data<int8_t>();
    for (int64_t i = 0; i < n; ++i) dst[i] = scale * static_cast<float>(src[i] - zero_point);
  }
}

}  // namespace

std::optional<QuantPrimitiveAttributes> MakeQuantAttributes(const ir::Node& node,
                                                            const QuantLinearParams& p,
                                                            const QuantAttributeOptions& options) {
  QuantPrimitiveAttributes out;
  out.dst_type = !p.quantized_output ? dt::f32 : p.y_type == DataType::kInt8 ? dt::s8 : dt::u8;
  const bool float_sum = p.sum == QuantSumKind::kFloat;
  out.sum_in_dst = (p.sum == QuantSumKind::kQuantized && p.quantized_output) ||
                   (float_sum && !p.quantized_output);
  out.sum_binary = float_sum && p.quantized_output;
  out.sum_dequantized = p.sum == QuantSumKind::kQuantized && !p.quantized_output;
  out.sum_in_dst = out.sum_in_dst || out.sum_dequantized;

  Activation a = ReadActivation(node);
  const float t = p.quantized_output ? p.y_scale : 1.0f;
  const float d = IsHomogeneous(a) && !out.sum_binary ? t : 1.0f;
  const size_t channels = p.w_scale.size();
  const bool fold_sum_zp =
      options.sum_zero_point_in_bias && p.sum == QuantSumKind::kQuantized && p.sum_zero_point != 0;
  // A real-domain constant added before the sum post-op: B[o] and, when folded, the Sum's
  // -sum_scale * sum_zp.
  const float sum_shift = fold_sum_zp ? -p.sum_scale * static_cast<float>(p.sum_zero_point) : 0;
  out.output_scales.resize(channels);
  for (size_t o = 0; o < channels; ++o) {
    const float acc_scale = p.x_scale * p.w_scale[o];
    if (!(acc_scale > 0.0f) || !std::isfinite(acc_scale)) return std::nullopt;
    out.output_scales[o] = acc_scale / d;
    if (!p.bias.empty() || fold_sum_zp) {
      out.bias.push_back(((p.bias.empty() ? 0.0f : p.bias[o]) + sum_shift) / acc_scale);
    }
  }
  bool all_equal = true;
  for (float s : out.output_scales) all_equal = all_equal && s == out.output_scales[0];
  if (all_equal) {
    out.attr.set_output_scales(0, {out.output_scales[0]});
  } else {
    out.attr.set_output_scales(1 << 1, out.output_scales);
  }
  if (p.x_zero_point != 0) out.attr.set_zero_points(DNNL_ARG_SRC, 0, {p.x_zero_point});
  if (p.quantized_output && p.y_zero_point != 0) {
    out.attr.set_zero_points(DNNL_ARG_DST, 0, {p.y_zero_point});
  }

  dnnl::post_ops ops;
  if (out.sum_binary) {
    ops.append_binary(alg::binary_add, options.sum_desc);
  } else if (out.sum_in_dst && (float_sum || out.sum_dequantized)) {
    ops.append_sum(1.0f / d);
  } else if (out.sum_in_dst) {
    dt sum_type = p.sum_type == DataType::kInt8 ? dt::s8 : dt::u8;
    if (fold_sum_zp && sum_type == out.dst_type) {
      ops.append_sum(p.sum_scale / d);
    } else {
      ops.append_sum(p.sum_scale / d, fold_sum_zp ? 0 : p.sum_zero_point, sum_type);
    }
  }
  if (!AppendScaledActivation(a, d, t, ops)) return std::nullopt;
  // ONNX QuantizeLinear rounds v = real / y_scale half to even and then adds the zero
  // point; oneDNN adds its dst zero point before the final rounding, so an exact tie with
  // an odd zero point rounded the other way (1.5 + 1 -> 2, not round(1.5) + 1 = 3). An
  // explicit round (half to even) before the zero point keeps the graph's order; the value
  // is then an integer and the final conversion only saturates.
  if (p.quantized_output && p.y_zero_point != 0) {
    ops.append_eltwise(1.0f, alg::eltwise_round, 0.0f, 0.0f);
  }
  out.attr.set_post_ops(ops);
  return out;
}

std::optional<Tensor> CenteredInt8Weights(const Tensor& w, const std::vector<int32_t>& zero_points,
                                          int64_t channel_stride, int64_t channels) {
  std::vector<int32_t> values = WidenInts(w);
  auto t = Tensor::Allocate(DataType::kInt8, w.sizes());
  if (!t.ok()) return std::nullopt;
  int8_t* dst = t->data<int8_t>();
  for (size_t i = 0; i < values.size(); ++i) {
    int32_t v = values[i] - zero_points[(i / channel_stride) % channels];
    if (v < -128 || v > 127) return std::nullopt;
    dst[i] = static_cast<int8_t>(v);
  }
  return *std::move(t);
}

StatusOr<std::optional<QuantLinearParams>> ReadRequestParams(const KernelRequest& request,
                                                             int64_t channels) {
  using namespace qlinear;
  std::vector<QuantInput> inputs(std::min<size_t>(request.inputs.size(), kSumZeroPoint + 1));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo* info = request.inputs[i];
    if (info == nullptr) continue;
    bool data_input = i == kX || i == kW || i == kSum;
    if (!data_input && !info->has_constant()) return std::optional<QuantLinearParams>();
    inputs[i] = QuantInput{info->dtype, info->has_constant() ? &info->constant : nullptr};
  }
  ASSIGN_OR_RETURN(QuantLinearParams p, ReadQuantLinearParams(request.node, inputs, channels));
  return std::optional<QuantLinearParams>(std::move(p));
}

Status OnednnQuantKernel::Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  try {
    args_.Bind(DNNL_ARG_SRC, p_.src, inputs[qlinear::kX].raw_data());
    args_.Set(DNNL_ARG_WEIGHTS, p_.weights);
    args_.Bind(DNNL_ARG_DST, p_.dst, outputs[0].raw_data());
    if (p_.bias) args_.Set(DNNL_ARG_BIAS, *p_.bias);
    if (p_.sum_in_dst || p_.sum_binary) {
      const Tensor& sum = inputs[qlinear::kSum];
      bool fits = p_.sum_binary || p_.sum_dequantized
                      ? sum.num_elements() == outputs[0].num_elements()
                      : sum.byte_size() == outputs[0].byte_size();
      if (!fits) {
        return InternalError(p_.name + ": Sum " + sum.DebugString() +
                             " does not match the output " + outputs[0].DebugString() +
                             " (the plan's sizes changed?)");
      }
      if (p_.sum_binary) {
        args_.Bind(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, p_.sum, sum.raw_data());
      } else if (p_.sum_dequantized) {
        DequantizeInto(sum, p_.sum_scale, p_.sum_zero_point, outputs[0].data<float>());
      } else if (sum.raw_data() != outputs[0].raw_data()) {
        std::memcpy(outputs[0].raw_data(), sum.raw_data(), outputs[0].byte_size());
      }
    }
    args_.Execute(p_.primitive);
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return onednn::FromDnnlError(e, "running " + p_.name);
  }
}

}  // namespace qtune::runtime
