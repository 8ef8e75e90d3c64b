// Reading QuantizeLinear / DequantizeLinear nodes for the QDQ fusions: the per-tensor
// quantization a node applies, when its scale and zero point are compile-time constants
// the int8 kernels can bake in.
#pragma once

#include <cstdint>
#include <optional>

#include "core/status.h"
#include "ir/graph.h"
#include "runtime/fusion/fusion_pipeline.h"

namespace qtune::runtime::qdq {

// One per-tensor int8/uint8 quantization: real = scale * (q - zero_point).
struct QParams {
  ir::Node* node = nullptr;         // the Q or DQ node it was read from
  ir::Value* scale = nullptr;       // float32 scalar initializer
  ir::Value* zero_point = nullptr;  // scalar initializer of `type`, or nullptr (0)
  float scale_value = 0.0f;
  int32_t zero_point_value = 0;
  DataType type = DataType::kUint8;  // the quantized side's type: kUint8 or kInt8
};

// The node producing `value` if it is a DequantizeLinear, else nullptr.
ir::Node* DequantizeProducer(const ir::Value* value);

// Per-tensor parameters of a QuantizeLinear (type = its output type) or DequantizeLinear
// (type = its input type), or nullopt when the node is another op, per-axis, blocked,
// not int8/uint8, or has a scale that is not a positive finite float32 constant.
std::optional<QParams> PerTensorParams(const ir::Node* node, const SizesByName& sizes);

// Same quantization (type, scale and zero point): a Q after a DQ with these is exact.
bool SameQuantization(const QParams& a, const QParams& b);

// The zero point as a graph value: `p.zero_point`, or a new 0 initializer of `p.type` when
// the node omitted it (the fused ops need it explicitly).
StatusOr<ir::Value*> ZeroPointValue(ir::Graph& graph, const QParams& p);

// Removes DequantizeLinear and QuantizeLinear nodes whose outputs nobody reads any more.
Status RemoveDeadQdqNodes(ir::Graph& graph);

}  // namespace qtune::runtime::qdq
