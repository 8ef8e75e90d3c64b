#include "runtime/kernels/onednn_post_ops.h"

#include <algorithm>
#include <cmath>

#include "runtime/fusion/fused_ops.h"

namespace qtune::runtime {

StatusOr<bool> AppendActivation(const ir::Node& fused_node, dnnl::post_ops& post_ops) {
  Activation a = ReadActivation(fused_node);
  auto param = [&](size_t i, float fallback) {
    return i < a.params.size() ? a.params[i] : fallback;
  };
  using alg = dnnl::algorithm;
  if (a.op.empty()) {
  } else if (a.op == "Relu") {
    post_ops.append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f);
  } else if (a.op == "LeakyRelu") {
    post_ops.append_eltwise(1.0f, alg::eltwise_relu, param(0, 0.01f), 0.0f);
  } else if (a.op == "Clip") {
    float lo = param(0, -INFINITY), hi = param(1, INFINITY);
    if (!std::isfinite(lo) || !std::isfinite(hi)) {
      lo = std::isfinite(lo) ? lo : -3.4e38f;
      hi = std::isfinite(hi) ? hi : 3.4e38f;
    }
    post_ops.append_eltwise(1.0f, alg::eltwise_clip, lo, hi);
  } else if (a.op == "Sigmoid") {
    post_ops.append_eltwise(1.0f, alg::eltwise_logistic, 0.0f, 0.0f);
  } else if (a.op == "HardSigmoid") {
    // oneDNN 2.6's JIT post-op injector keeps one eltwise injector per algorithm: a second
    // eltwise_linear (post_linear) would silently run with the first one's alpha/beta. So
    // post_linear folds in here: s*clip(a*x+b, 0, 1)+t == clip(s*a*x+s*b+t, lo, hi).
    float s = a.post_scale, t = a.post_shift;
    post_ops.append_eltwise(1.0f, alg::eltwise_linear, s * param(0, 0.2f), s * param(1, 0.5f) + t);
    post_ops.append_eltwise(1.0f, alg::eltwise_clip, std::min(t, s + t), std::max(t, s + t));
    return true;
  } else if (a.op == "HardSwish") {
    post_ops.append_eltwise(1.0f, alg::eltwise_hardswish, 0.0f, 0.0f);
  } else if (a.op == "Tanh") {
    post_ops.append_eltwise(1.0f, alg::eltwise_tanh, 0.0f, 0.0f);
  } else if (a.op == "Gelu") {
    post_ops.append_eltwise(1.0f, alg::eltwise_gelu_erf, 0.0f, 0.0f);
  } else if (a.op == "GeluTanh") {
    post_ops.append_eltwise(1.0f, alg::eltwise_gelu_tanh, 0.0f, 0.0f);
  } else {
    return false;
  }
  if (a.has_post_linear()) {
    post_ops.append_eltwise(1.0f, alg::eltwise_linear, a.post_scale, a.post_shift);
  }
  return true;
}

}  // namespace qtune::runtime
