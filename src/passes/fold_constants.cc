#include "passes/fold_constants.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/logging.h"
#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

bool IsNondeterministic(std::string_view op_type) {
  static constexpr std::array<std::string_view, 6> kOps = {"RandomNormal",     "RandomUniform",
                                                           "RandomNormalLike", "RandomUniformLike",
                                                           "Multinomial",      "Bernoulli"};
  return std::find(kOps.begin(), kOps.end(), op_type) != kOps.end();
}

bool HasSubgraph(const ir::Node& node) {
  if (!node.implicit_inputs().empty()) return true;
  return std::any_of(
      node.attributes().begin(), node.attributes().end(), [](const ir::Attribute& a) {
        return a.type == ir::AttributeType::kGraph || a.type == ir::AttributeType::kGraphs;
      });
}

// Bytes of a value's declared type when its shape is fully known, else -1.
int64_t DeclaredBytes(const ir::Value* value) {
  const ir::TensorType& type = value->type();
  if (!type.shape.has_value() || !type.shape->is_fully_known()) return -1;
  int64_t elements = NumElements(type.shape->sizes());
  size_t element_size = DataTypeSize(type.dtype);
  if (elements < 0 || element_size == 0) return -1;
  return elements * static_cast<int64_t>(element_size);
}

bool IsFloat8(DataType type) {
  return type == DataType::kFloat8E4M3FN || type == DataType::kFloat8E5M2;
}

DataType ConstantType(const ir::Value* value) {
  return value != nullptr && IsConstant(value) ? value->initializer().dtype()
                                               : DataType::kUndefined;
}

// A DequantizeLinear of block-float weights (NVFP4, MXFP8; core/block_float.h): float4e2m1
// values, float8 values with block scales or float8e8m0 scales, or the float8 block scales
// of NVFP4 (read only by float4e2m1 DequantizeLinears). No kernel fuses these, and the
// reference DequantizeLinear at every run costs ~60x a 2048x2048 fp32 MatMul, so they are
// dequantized once at compile time (the file stays small; the engine holds fp32).
bool IsBlockFloatDequantize(const ir::Node& node) {
  if (node.op_type() != "DequantizeLinear" || node.num_inputs() < 2) return false;
  const DataType x = ConstantType(node.input(0));
  if (x == DataType::kFloat4E2M1) return true;
  if (!IsFloat8(x)) return false;
  if (node.GetInt("block_size", 0) > 0 || ConstantType(node.input(1)) == DataType::kFloat8E8M0) {
    return true;
  }
  const ir::Value* out = node.output(0);
  return out != nullptr && !out->uses().empty() && !out->is_graph_output() &&
         std::all_of(out->uses().begin(), out->uses().end(), [](const ir::Use& use) {
           return use.node->op_type() == "DequantizeLinear" && use.input_index == 1 &&
                  ConstantType(use.node->input(0)) == DataType::kFloat4E2M1;
         });
}

// A blocked integer DequantizeLinear (int4 / uint4 / int8 / uint8 codes, block_size > 0)
// of a constant weight read only by Convs as their weight: no kernel fuses it (the low-bit
// GEMV takes MatMul only), so it is dequantized once at compile time and the Conv runs at
// fp32 speed on its usual kernels.
bool IsBlockedConvWeightDequantize(const ir::Node& node) {
  if (node.op_type() != "DequantizeLinear" || node.num_inputs() < 2 ||
      node.GetInt("block_size", 0) <= 0) {
    return false;
  }
  const DataType x = ConstantType(node.input(0));
  if (x != DataType::kInt4 && x != DataType::kUint4 && x != DataType::kInt8 &&
      x != DataType::kUint8) {
    return false;
  }
  const ir::Value* out = node.output(0);
  return out != nullptr && !out->uses().empty() && !out->is_graph_output() &&
         std::all_of(out->uses().begin(), out->uses().end(), [](const ir::Use& use) {
           return (use.node->op_type() == "Conv" || use.node->op_type() == "ConvTranspose") &&
                  use.input_index == 1;
         });
}

bool IsFoldable(const ir::Node& node, int64_t max_bytes) {
  if (!IsDefaultDomain(node) || node.op_type() == "Constant") return false;
  // A DequantizeLinear of a constant keeps the quantized weights visible to the engine's
  // QDQ fusion (which then runs int8 kernels on them) and keeps QDQ models small; the
  // block-float ones have no such kernel.
  if (node.op_type() == "DequantizeLinear" && !IsBlockFloatDequantize(node) &&
      !IsBlockedConvWeightDequantize(node)) {
    return false;
  }
  if (IsNondeterministic(node.op_type()) || HasSubgraph(node)) return false;
  if (std::none_of(node.outputs().begin(), node.outputs().end(), IsLive)) return false;
  for (const ir::Value* in : node.inputs()) {
    if (in != nullptr && !IsConstant(in)) return false;
  }
  // A declared output size above the limit spares evaluating it at all.
  for (const ir::Value* out : node.outputs()) {
    if (out != nullptr && DeclaredBytes(out) > max_bytes) return false;
  }
  return true;
}

// The evaluated outputs when every live output came back within the size limit; an
// empty vector when the node should stay as it is.
StatusOr<std::vector<Tensor>> Evaluate(const ir::Graph& graph, const ir::Node& node,
                                       const PassOptions& options) {
  std::vector<Tensor> inputs;
  inputs.reserve(node.num_inputs());
  for (const ir::Value* in : node.inputs()) {
    inputs.push_back(in == nullptr ? Tensor() : in->initializer());
  }
  StatusOr<std::vector<Tensor>> result = options.evaluator(node, inputs, graph.onnx_opset());
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kUnimplemented) {
      QTUNE_LOG_DEBUG("fold_constants: no kernel for {}: {}", node.DebugName(),
                      result.status().message());
      return std::vector<Tensor>{};
    }
    return result.status().WithContext("folding " + node.DebugName());
  }
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (!IsLive(node.output(i))) continue;
    if (i >= result->size() || !(*result)[i].is_valid()) {
      return InternalError("folding " + node.DebugName() + ": the evaluator returned no output " +
                           std::to_string(i));
    }
    if (static_cast<int64_t>((*result)[i].byte_size()) > options.max_folded_tensor_bytes) {
      return std::vector<Tensor>{};
    }
  }
  return result;
}

}  // namespace

StatusOr<bool> FoldConstants(ir::Graph& graph, const PassOptions& options) {
  if (!options.evaluator) return false;
  // In topological order a node's constant inputs are all folded before it is visited,
  // so one sweep reaches the fixed point.
  ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  bool changed = false;
  for (ir::Node* node : order) {
    if (!IsFoldable(*node, options.max_folded_tensor_bytes)) continue;
    ASSIGN_OR_RETURN(std::vector<Tensor> outputs, Evaluate(graph, *node, options));
    if (outputs.empty()) continue;
    RETURN_IF_ERROR(ReplaceNodeWithInitializers(graph, node, outputs));
    changed = true;
  }
  return changed;
}

}  // namespace qtune::passes
