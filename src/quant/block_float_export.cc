#include "quant/block_float_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/block_float.h"
#include "core/float_convert.h"
#include "core/shape.h"
#include "quant/placement_rules.h"

namespace qtune::quant {
namespace {

// Adds a DequantizeLinear node; its output is float32 with `sizes`.
StatusOr<ir::Value*> AddDequantize(ir::Graph& graph, const std::string& base,
                                   std::vector<ir::Value*> inputs,
                                   std::vector<ir::Attribute> attributes,
                                   const std::vector<int64_t>& sizes) {
  ir::NodeSpec spec;
  spec.op_type = "DequantizeLinear";
  spec.name = graph.UniqueNodeName(base + "_DequantizeLinear");
  spec.inputs = std::move(inputs);
  spec.attributes = std::move(attributes);
  spec.output_names = {graph.UniqueValueName(base + "_dequantized")};
  ASSIGN_OR_RETURN(ir::Node * node, graph.AddNode(std::move(spec)));
  node->output(0)->set_type(ir::TensorType{DataType::kFloat32, Shape::FromSizes(sizes)});
  return node->output(0);
}

StatusOr<ir::Value*> AddConstant(ir::Graph& graph, const std::string& name, Tensor tensor) {
  return graph.AddInitializer(graph.UniqueValueName(name), std::move(tensor));
}

}  // namespace

bool IsBlockFloatFormat(QuantFormat format) {
  return format == QuantFormat::kNvfp4 || format == QuantFormat::kMxfp8;
}

BlockFloatLayout BlockFloatLayoutFor(Target target) {
  return target == Target::kOrt ? BlockFloatLayout::kFloatScales : BlockFloatLayout::kStandard;
}

int64_t BlockFloatOpset(QuantFormat format, BlockFloatLayout layout) {
  if (layout == BlockFloatLayout::kFloatScales) return 21;
  return format == QuantFormat::kNvfp4 ? 23 : 24;
}

StatusOr<BlockFloatExport> ExportBlockFloatWeight(
    ir::Graph& graph, QuantFormat format, ir::Value* weight,
    const std::vector<std::pair<ir::Node*, int>>& consumers, BlockFloatLayout layout) {
  const std::string what = fmt::format("{} weight '{}'", QuantFormatName(format), weight->name());
  if (consumers.empty()) return InvalidArgumentError(what + " has no reader to quantize for");
  if (!weight->is_initializer()) return InvalidArgumentError(what + " is not an initializer");
  const Tensor& w = weight->initializer();
  // Conv readers: W [O, I / group, k...] blocked along axis 1 (inside each group).
  const bool conv = consumers.front().first->op_type() == "Conv";
  if (w.dtype() != DataType::kFloat32 || (conv ? w.rank() < 3 : w.rank() != 2)) {
    return InvalidArgumentError(
        fmt::format("{} is {}; block-float weights must be 2-D float32 (a Conv's: rank >= 3)", what,
                    w.DebugString()));
  }
  std::optional<int> axis;
  for (const auto& [node, index] : consumers) {
    const std::optional<int> a = ReductionAxis(*node, static_cast<int>(w.rank()));
    const bool same_kind = (node->op_type() == "Conv") == conv;
    if (index != 1 || !a.has_value() || !same_kind || (axis.has_value() && *a != *axis)) {
      return InvalidArgumentError(fmt::format(
          "{} is read by {} as input {}; every reader must be a MatMul or Gemm (or every one a "
          "Conv) reading it as input 1 along one reduction axis",
          what, node->DebugName(), index));
    }
    axis = a;
  }
  auto quantized =
      format == QuantFormat::kNvfp4 ? QuantizeNvfp4(w, *axis) : QuantizeMxfp8(w, *axis);
  if (!quantized.ok()) return quantized.status().WithContext(what);
  BlockQuantized& q = *quantized;

  const std::string base = weight->name();
  const std::vector<ir::Attribute> blocked = {ir::Attribute::Int("axis", *axis),
                                              ir::Attribute::Int("block_size", q.block_size)};
  BlockFloatExport out;
  out.k = w.size(static_cast<size_t>(*axis));
  out.channels = conv ? w.num_elements() / out.k : w.size(static_cast<size_t>(1 - *axis));
  out.min_scale = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < q.scales.num_elements(); ++i) {
    const uint8_t code = q.scales.data<uint8_t>()[i];
    const float s = format == QuantFormat::kNvfp4 ? Float8E4M3FNToFloat(code) * q.global_scale
                                                  : Float8E8M0ToFloat(code);
    out.min_scale = std::min(out.min_scale, s);
    out.max_scale = std::max(out.max_scale, s);
  }
  ir::Value* dequantized = nullptr;
  if (layout == BlockFloatLayout::kStandard && format == QuantFormat::kNvfp4) {
    ASSIGN_OR_RETURN(ir::Value * scale_codes, AddConstant(graph, base + "_scale_e4m3", q.scales));
    ASSIGN_OR_RETURN(ir::Value * global, AddConstant(graph, base + "_global_scale",
                                                     Tensor::Scalar<float>(q.global_scale)));
    ASSIGN_OR_RETURN(
        ir::Value * scales,
        AddDequantize(graph, base + "_scale", {scale_codes, global}, {}, q.scales.sizes()));
    ASSIGN_OR_RETURN(ir::Value * values, AddConstant(graph, base + "_e2m1", q.values));
    ASSIGN_OR_RETURN(dequantized, AddDequantize(graph, base, {values, scales}, blocked, w.sizes()));
  } else if (layout == BlockFloatLayout::kStandard) {  // MXFP8, float8e8m0 scales
    ASSIGN_OR_RETURN(ir::Value * values, AddConstant(graph, base + "_e4m3", q.values));
    ASSIGN_OR_RETURN(ir::Value * scales, AddConstant(graph, base + "_scale_e8m0", q.scales));
    std::vector<ir::Attribute> attributes = blocked;
    attributes.push_back(ir::Attribute::Int("output_dtype", 1));  // e8m0 is no output type
    ASSIGN_OR_RETURN(dequantized,
                     AddDequantize(graph, base, {values, scales}, attributes, w.sizes()));
  } else {  // e4m3 values, float32 scales
    ASSIGN_OR_RETURN(Tensor values, Tensor::Allocate(DataType::kFloat8E4M3FN, w.sizes()));
    ASSIGN_OR_RETURN(Tensor scales, Tensor::Allocate(DataType::kFloat32, q.scales.sizes()));
    const bool nvfp4 = format == QuantFormat::kNvfp4;
    for (int64_t i = 0; i < values.num_elements(); ++i) {
      const uint8_t code = q.values.data<uint8_t>()[i];
      values.data<uint8_t>()[i] = nvfp4 ? FloatToFloat8E4M3FN(Float4E2M1ToFloat(code)) : code;
    }
    for (int64_t i = 0; i < scales.num_elements(); ++i) {
      const uint8_t code = q.scales.data<uint8_t>()[i];
      scales.data<float>()[i] =
          nvfp4 ? Float8E4M3FNToFloat(code) * q.global_scale : Float8E8M0ToFloat(code);
    }
    ASSIGN_OR_RETURN(ir::Value * value_init, AddConstant(graph, base + "_e4m3", std::move(values)));
    ASSIGN_OR_RETURN(ir::Value * scale_init,
                     AddConstant(graph, base + "_scale", std::move(scales)));
    ASSIGN_OR_RETURN(dequantized,
                     AddDequantize(graph, base, {value_init, scale_init}, blocked, w.sizes()));
  }
  out.dq_node = dequantized->producer()->name();
  for (const auto& [node, index] : consumers) {
    graph.SetNodeInput(node, static_cast<size_t>(index), dequantized);
  }
  if (weight->uses().empty() && !weight->is_graph_output()) {
    RETURN_IF_ERROR(graph.RemoveValue(weight));
  }
  return out;
}

}  // namespace qtune::quant
