#include "runtime/fusion/fused_ops.h"

#include <algorithm>
#include <cmath>

#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {

bool IsQtuneOp(const ir::Node& node, const char* op_type) {
  return node.domain() == kQtuneDomain && node.op_type() == op_type;
}

bool IsFusibleActivation(const ir::Node& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  const std::string& op = node.op_type();
  return op == "Relu" || op == "LeakyRelu" || op == "Clip" || op == "Sigmoid" ||
         op == "HardSigmoid" || op == "HardSwish" || op == "Tanh";
}

std::optional<Activation> ActivationOf(const ir::Node& node, int64_t opset) {
  if (!IsFusibleActivation(node)) return std::nullopt;
  Activation a{node.op_type(), {}};
  if (node.op_type() == "LeakyRelu") a.params = {node.GetFloat("alpha", 0.01f)};
  if (node.op_type() == "HardSigmoid") {
    a.params = {node.GetFloat("alpha", 0.2f), node.GetFloat("beta", 0.5f)};
  }
  if (node.op_type() == "Clip") {
    float lo = -INFINITY, hi = INFINITY;
    if (opset < 11) {
      lo = node.GetFloat("min", lo);
      hi = node.GetFloat("max", hi);
    } else {
      if (node.input(1) != nullptr) {
        auto v = pattern::Scalar(node.input(1));
        if (!v) return std::nullopt;
        lo = *v;
      }
      if (node.input(2) != nullptr) {
        auto v = pattern::Scalar(node.input(2));
        if (!v) return std::nullopt;
        hi = *v;
      }
    }
    a.params = {lo, hi};
  }
  return a;
}

std::optional<Activation> MatMulActivationOf(const ir::Node& node, int64_t opset) {
  if (node.op_type() == "Gelu" && (node.domain().empty() || node.domain() == "ai.onnx")) {
    const std::string approximate = node.GetString("approximate", "none");
    if (approximate == "none") return Activation{"Gelu", {}};
    if (approximate == "tanh") return Activation{"GeluTanh", {}};
    return std::nullopt;
  }
  return ActivationOf(node, opset);
}

Activation ReadActivation(const ir::Node& node) {
  Activation a{node.GetString("activation", ""), node.GetFloats("activation_params", {})};
  std::vector<float> linear = node.GetFloats("post_linear", {});
  if (linear.size() == 2) {
    a.post_scale = linear[0];
    a.post_shift = linear[1];
  }
  return a;
}

void ApplyActivation(const Activation& a, float* data, int64_t n) {
  auto param = [&](size_t i, float fallback) {
    return i < a.params.size() ? a.params[i] : fallback;
  };
  if (a.has_post_linear()) {
    Activation plain = a;
    plain.post_scale = 1.0f;
    plain.post_shift = 0.0f;
    ApplyActivation(plain, data, n);
    for (int64_t i = 0; i < n; ++i) data[i] = data[i] * a.post_scale + a.post_shift;
    return;
  }
  if (a.op.empty()) return;
  if (a.op == "Relu") {
    for (int64_t i = 0; i < n; ++i) data[i] = std::max(data[i], 0.0f);
  } else if (a.op == "LeakyRelu") {
    float alpha = param(0, 0.01f);
    for (int64_t i = 0; i < n; ++i) data[i] = data[i] < 0 ? data[i] * alpha : data[i];
  } else if (a.op == "Clip") {
    float lo = param(0, -INFINITY), hi = param(1, INFINITY);
    for (int64_t i = 0; i < n; ++i) data[i] = std::min(std::max(data[i], lo), hi);
  } else if (a.op == "Sigmoid") {
    for (int64_t i = 0; i < n; ++i) data[i] = 1.0f / (1.0f + std::exp(-data[i]));
  } else if (a.op == "HardSigmoid") {
    float alpha = param(0, 0.2f), beta = param(1, 0.5f);
    for (int64_t i = 0; i < n; ++i) data[i] = std::clamp(alpha * data[i] + beta, 0.0f, 1.0f);
  } else if (a.op == "HardSwish") {
    for (int64_t i = 0; i < n; ++i) {
      data[i] = data[i] * std::clamp(data[i] / 6.0f + 0.5f, 0.0f, 1.0f);
    }
  } else if (a.op == "Tanh") {
    for (int64_t i = 0; i < n; ++i) data[i] = std::tanh(data[i]);
  } else if (a.op == "Gelu") {
    for (int64_t i = 0; i < n; ++i) {
      data[i] = 0.5f * data[i] * (1.0f + std::erf(data[i] * 0.70710678118654752f));
    }
  } else if (a.op == "GeluTanh") {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    for (int64_t i = 0; i < n; ++i) {
      const float x = data[i];
      data[i] = 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
  }
}

}  // namespace qtune::runtime
