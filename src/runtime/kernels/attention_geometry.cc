#include "runtime/kernels/attention_geometry.h"

#include "runtime/fusion/fused_ops.h"

namespace qtune::runtime {
namespace {

// Strides over [B,H,S,T] of a mask of `sizes` broadcast to `full`, or empty if it does not
// broadcast.
std::vector<int64_t> MaskStrides(const std::vector<int64_t>& sizes, const int64_t full[4]) {
  if (sizes.size() > 4) return {};
  std::vector<int64_t> strides(4, 0);
  const size_t offset = 4 - sizes.size();
  int64_t stride = 1;
  for (size_t i = 4; i-- > offset;) {
    const int64_t n = sizes[i - offset];
    if (n != 1 && n != full[i]) return {};
    strides[i] = n == 1 ? 0 : stride;
    stride *= n;
  }
  return strides;
}

}  // namespace

std::optional<AttentionGeometry> AttentionGeometryOf(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (!IsQtuneOp(node, "Attention") || request.inputs.size() < 3 || request.outputs.empty() ||
      request.outputs[0] == nullptr) {
    return std::nullopt;
  }
  for (size_t i = 0; i < 3; ++i) {
    const ValueInfo* in = request.inputs[i];
    if (in == nullptr || in->dtype != DataType::kFloat32 || in->sizes.size() != 3) {
      return std::nullopt;
    }
  }
  const std::vector<int64_t>& q = request.inputs[0]->sizes;
  const std::vector<int64_t>& k = request.inputs[1]->sizes;
  AttentionGeometry g;
  g.b = q[0];
  g.s = q[1];
  g.t = k[1];
  g.h = node.GetInt("num_heads", 0);
  if (g.h <= 0 || q[2] % g.h != 0) return std::nullopt;
  g.d = q[2] / g.h;
  if (g.b * g.s * g.t * g.d == 0) return std::nullopt;
  g.scale = node.GetFloat("scale", 1.0f);
  g.has_mask = request.input(3) != nullptr;
  if (g.has_mask) {
    const int64_t full[4] = {g.b, g.h, g.s, g.t};
    if (request.inputs[3]->dtype != DataType::kFloat32) return std::nullopt;
    g.mask_strides = MaskStrides(request.inputs[3]->sizes, full);
    if (g.mask_strides.empty()) {
      if (request.why_not != nullptr) *request.why_not = "the mask does not broadcast";
      return std::nullopt;
    }
  }
  return g;
}

}  // namespace qtune::runtime
