#include "passes/fold_constant_dequantize.h"

#include <optional>
#include <vector>

#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

bool IsFoldableIntType(DataType t) {
  return t == DataType::kInt8 || t == DataType::kUint8 || t == DataType::kInt16 ||
         t == DataType::kUint16 || t == DataType::kInt32 || t == DataType::kInt4 ||
         t == DataType::kUint4;
}

// Element i of an integer tensor of a type IsFoldableIntType accepts, widened.
int64_t IntAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt8:
      return t.data<int8_t>()[i];
    case DataType::kUint8:
      return t.data<uint8_t>()[i];
    case DataType::kInt16:
      return t.data<int16_t>()[i];
    case DataType::kUint16:
      return t.data<uint16_t>()[i];
    case DataType::kInt4:  // held unpacked, one element per byte (core/dtype.h)
      return static_cast<const int8_t*>(t.raw_data())[i];
    case DataType::kUint4:
      return static_cast<const uint8_t*>(t.raw_data())[i];
    default:
      return t.data<int32_t>()[i];
  }
}

// Blocked form (opset 21): scale (and zero point) have q's sizes but ceil(size / block)
// along `axis`; element (o, a, i) of q [outer, A, inner] reads scale (o, a / block, i).
std::optional<Tensor> DequantizeBlocked(const ir::Node& dq, const Tensor& q, const Tensor& scale,
                                        const Tensor* zp, int64_t block) {
  const int64_t rank = static_cast<int64_t>(q.rank());
  int64_t axis = dq.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || scale.rank() != q.rank() ||
      (zp != nullptr && zp->sizes() != scale.sizes())) {
    return std::nullopt;
  }
  int64_t outer = 1, inner = 1;
  const int64_t size = q.size(static_cast<size_t>(axis));
  const int64_t groups = (size + block - 1) / block;
  for (int64_t d = 0; d < rank; ++d) {
    const size_t u = static_cast<size_t>(d);
    if (d == axis ? scale.size(u) != groups : scale.size(u) != q.size(u)) return std::nullopt;
    if (d < axis) outer *= q.size(u);
    if (d > axis) inner *= q.size(u);
  }
  StatusOr<Tensor> out = Tensor::Allocate(DataType::kFloat32, q.sizes());
  if (!out.ok()) return std::nullopt;
  const float* s = scale.data<float>();
  float* dst = out->data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t a = 0; a < size; ++a) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (o * size + a) * inner + i;
        const int64_t c = (o * groups + a / block) * inner + i;
        const int64_t z = zp != nullptr ? IntAt(*zp, c) : 0;
        dst[at] = static_cast<float>(IntAt(q, at) - z) * s[c];
      }
    }
  }
  return *std::move(out);
}

// The dequantized tensor, or nullopt when the node is not a form this pass folds.
std::optional<Tensor> Dequantize(const ir::Node& dq) {
  const int64_t block = dq.GetInt("block_size", 0);
  if (dq.num_inputs() < 2 || block < 0) return std::nullopt;
  const ir::Value* q_value = dq.input(0);
  const ir::Value* scale_value = dq.input(1);
  const ir::Value* zp_value = dq.num_inputs() > 2 ? dq.input(2) : nullptr;
  if (!IsConstant(q_value) || !IsConstant(scale_value) ||
      (zp_value != nullptr && !IsConstant(zp_value))) {
    return std::nullopt;
  }
  const Tensor& q = q_value->initializer();
  const Tensor& scale = scale_value->initializer();
  if (!IsFoldableIntType(q.dtype()) || scale.dtype() != DataType::kFloat32) return std::nullopt;
  const Tensor* zp = zp_value != nullptr ? &zp_value->initializer() : nullptr;
  if (zp != nullptr && (zp->dtype() != q.dtype() || zp->num_elements() != scale.num_elements())) {
    return std::nullopt;
  }
  if (block > 0) return DequantizeBlocked(dq, q, scale, zp, block);
  // Per tensor: one scale. Per axis: scale [q.size(axis)], consecutive elements of one
  // channel `inner` apart.
  int64_t channels = 1;
  int64_t inner = 1;
  if (scale.num_elements() != 1) {
    const int64_t rank = static_cast<int64_t>(q.rank());
    int64_t axis = dq.GetInt("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || scale.rank() != 1 ||
        scale.size(0) != q.size(static_cast<size_t>(axis))) {
      return std::nullopt;
    }
    channels = scale.size(0);
    for (int64_t d = axis + 1; d < rank; ++d) inner *= q.size(static_cast<size_t>(d));
  }
  StatusOr<Tensor> out = Tensor::Allocate(DataType::kFloat32, q.sizes());
  if (!out.ok()) return std::nullopt;
  const float* s = scale.data<float>();
  float* dst = out->data<float>();
  for (int64_t i = 0; i < q.num_elements(); ++i) {
    const int64_t c = channels == 1 ? 0 : (i / inner) % channels;
    const int64_t z = zp != nullptr ? IntAt(*zp, c) : 0;
    dst[i] = static_cast<float>(IntAt(q, i) - z) * s[c];
  }
  return *std::move(out);
}

// Removes the constants the folded node read, when nothing else reads them.
Status RemoveUnusedConstants(ir::Graph& graph, const std::vector<ir::Value*>& values) {
  for (ir::Value* v : values) {  // REQUIRES: no duplicates
    if (v == nullptr || !v->is_initializer() || v->is_graph_input() || v->is_graph_output() ||
        !v->uses().empty()) {
      continue;
    }
    RETURN_IF_ERROR(graph.RemoveValue(v));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<int> FoldConstantDequantizeCount(ir::Graph& graph) {
  int folded = 0;
  for (ir::Node* node : graph.nodes()) {  // a copy: folding removes nodes
    if (!IsDefaultDomain(*node) || node->op_type() != "DequantizeLinear") continue;
    if (node->num_outputs() != 1 || !IsLive(node->output(0))) continue;
    std::optional<Tensor> value = Dequantize(*node);
    if (!value) continue;
    std::vector<ir::Value*> inputs;
    for (ir::Value* in : node->inputs()) {
      bool seen = false;
      for (ir::Value* v : inputs) seen = seen || v == in;
      if (in != nullptr && !seen) inputs.push_back(in);
    }
    RETURN_IF_ERROR(ReplaceNodeWithInitializers(graph, node, {*std::move(value)}));
    RETURN_IF_ERROR(RemoveUnusedConstants(graph, inputs));
    ++folded;
  }
  return folded;
}

StatusOr<bool> FoldConstantDequantize(ir::Graph& graph, const PassOptions& options) {
  (void)options;
  ASSIGN_OR_RETURN(int folded, FoldConstantDequantizeCount(graph));
  return folded > 0;
}

}  // namespace qtune::passes
