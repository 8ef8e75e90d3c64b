#include "runtime/reference/block_scale_check.h"

#include <cmath>
#include <string>

#include "runtime/reference/quant_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime {
namespace {

// The float types whose values LoadAsDouble decodes; others are the kernel's to refuse.
bool ReadableFloat(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E8M0:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status CheckBlockScaledInitializers(const ir::Graph& graph) {
  for (const ir::Node* node : graph.nodes()) {
    if (node->op_type() != "DequantizeLinear" || node->GetInt("block_size", 0) == 0 ||
        node->num_inputs() < 2) {
      continue;
    }
    const ir::Value* x = node->input(0);
    const ir::Value* scale = node->input(1);
    if (x == nullptr || !x->is_initializer() || scale == nullptr) continue;
    // The scale initializer itself, or the one NVFP4's scale DequantizeLinear reads.
    const ir::Node* maker = scale->is_initializer() ? nullptr : scale->producer();
    const ir::Value* block_scales = scale;
    if (maker != nullptr) {
      if (maker->op_type() != "DequantizeLinear" || maker->num_inputs() < 1 ||
          maker->input(0) == nullptr || !maker->input(0)->is_initializer()) {
        continue;
      }
      block_scales = maker->input(0);
    } else if (!scale->is_initializer()) {
      continue;  // a graph input: the kernel checks it
    }
    const Tensor& s = block_scales->initializer();
    const std::string what = "block scales '" + block_scales->name() + "'" +
                             (maker == nullptr ? "" : " (through " + maker->DebugName() + ")") +
                             " of x '" + x->name() + "'";
    const ir::Value* zp = node->num_inputs() > 2 ? node->input(2) : nullptr;
    const bool zp_known = zp != nullptr && zp->is_initializer();
    if (zp != nullptr && !zp_known) continue;  // a computed zero point: the kernel checks it
    auto layout =
        quant::ResolveParamLayout(*node, graph.onnx_opset(), x->initializer().sizes(), s.sizes(),
                                  zp_known ? &zp->initializer().sizes() : nullptr);
    if (!layout.ok()) {
      std::string message = layout.status().message();
      const std::string prefix = node->DebugName() + ": ";
      if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
      return Status(layout.status().code(), prefix + what + ": " + message);
    }
    if (!ReadableFloat(s.dtype())) continue;
    for (int64_t i = 0; i < s.num_elements(); ++i) {
      const double v = reference::LoadAsDouble(s, i);
      if (!std::isfinite(v)) {
        return reference::NodeError(
            *node, what + " hold " + std::to_string(v) + " at index " + std::to_string(i) +
                       (s.dtype() == DataType::kFloat8E8M0 ? " (float8e8m0 0xFF is NaN)" : "") +
                       "; scales must be finite");
      }
    }
  }
  return Status::Ok();
}

}  // namespace qtune::runtime
