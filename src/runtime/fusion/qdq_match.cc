#include "runtime/fusion/qdq_match.h"

#include <cmath>

#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime::qdq {

ir::Node* DequantizeProducer(const ir::Value* value) {
  if (value == nullptr) return nullptr;
  ir::Node* producer = value->producer();
  return pattern::IsDefaultOp(producer, "DequantizeLinear") ? producer : nullptr;
}

namespace {

DataType TypeOf(const ir::Value* value, const SizesByName& sizes) {
  if (value == nullptr) return DataType::kUndefined;
  if (value->is_initializer()) return value->initializer().dtype();
  auto it = sizes.find(value->name());
  return it == sizes.end() ? DataType::kUndefined : it->second.dtype;
}

std::optional<int32_t> IntScalar(const Tensor& t) {
  if (t.num_elements() != 1) return std::nullopt;
  if (t.dtype() == DataType::kUint8) return t.data<uint8_t>()[0];
  if (t.dtype() == DataType::kInt8) return t.data<int8_t>()[0];
  return std::nullopt;
}

}  // namespace

std::optional<QParams> PerTensorParams(const ir::Node* node, const SizesByName& sizes) {
  bool is_q = pattern::IsDefaultOp(node, "QuantizeLinear");
  if (!is_q && !pattern::IsDefaultOp(node, "DequantizeLinear")) return std::nullopt;
  if (node->num_inputs() < 2 || node->GetInt("block_size", 0) != 0) return std::nullopt;
  QParams p;
  p.node = const_cast<ir::Node*>(node);
  p.scale = node->input(1);
  std::optional<float> scale = pattern::Scalar(p.scale);
  if (!scale || !std::isfinite(*scale) || *scale <= 0.0f) return std::nullopt;
  p.scale_value = *scale;
  p.zero_point = node->input(2);
  DataType quantized = is_q ? TypeOf(node->output(0), sizes) : TypeOf(node->input(0), sizes);
  if (p.zero_point != nullptr) {
    if (!p.zero_point->is_initializer()) return std::nullopt;
    std::optional<int32_t> zp = IntScalar(p.zero_point->initializer());
    if (!zp) return std::nullopt;
    p.zero_point_value = *zp;
    p.type = p.zero_point->initializer().dtype();
  } else if (is_q) {
    // No zero point: uint8, or the opset-21 output_dtype attribute's type.
    const int64_t output_dtype = node->GetInt("output_dtype", 0);
    if (output_dtype != 0) p.type = static_cast<DataType>(output_dtype);
  } else {
    p.type = quantized;  // a DequantizeLinear without zero point reads any 8-bit type as zp 0
  }
  if (quantized != p.type || (p.type != DataType::kUint8 && p.type != DataType::kInt8)) {
    return std::nullopt;
  }
  DataType real = is_q ? TypeOf(node->input(0), sizes) : TypeOf(node->output(0), sizes);
  if (real != DataType::kFloat32) return std::nullopt;
  return p;
}

bool SameQuantization(const QParams& a, const QParams& b) {
  return a.type == b.type && a.scale_value == b.scale_value &&
         a.zero_point_value == b.zero_point_value;
}

StatusOr<ir::Value*> ZeroPointValue(ir::Graph& graph, const QParams& p) {
  if (p.zero_point != nullptr) return p.zero_point;
  ASSIGN_OR_RETURN(Tensor zero, Tensor::Allocate(p.type, {}));  // zero-filled
  return graph.AddInitializer(graph.UniqueValueName(p.node->name() + "_zero_point"),
                              std::move(zero));
}

Status RemoveDeadQdqNodes(ir::Graph& graph) {
  for (bool changed = true; changed;) {
    changed = false;
    for (ir::Node* node : graph.nodes()) {
      if (!pattern::IsDefaultOp(node, "DequantizeLinear") &&
          !pattern::IsDefaultOp(node, "QuantizeLinear")) {
        continue;
      }
      const ir::Value* out = node->output(0);
      if (out != nullptr && (!out->uses().empty() || out->is_graph_output())) continue;
      RETURN_IF_ERROR(graph.RemoveNode(node));
      changed = true;
      break;
    }
  }
  return Status::Ok();
}

}  // namespace qtune::runtime::qdq
