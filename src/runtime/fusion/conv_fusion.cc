// Conv fusions into qtune::FusedConv (see fused_ops.h):
//   Conv -> Add(other) [-> activation]   (residual sum post-op)
//   Conv -> activation
#include <optional>

#include "passes/fold_constant_dequantize.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {
namespace {

using pattern::SoleConsumer;

bool IsFloatConv(const ir::Node& node, const SizesByName& sizes) {
  if (!pattern::IsDefaultOp(&node, "Conv") || node.output(0) == nullptr) return false;
  auto it = sizes.find(node.output(0)->name());
  return it != sizes.end() && it->second.dtype == DataType::kFloat32;
}

struct ConvMatch {
  ir::Node* conv = nullptr;
  ir::Node* add = nullptr;         // optional
  ir::Value* sum = nullptr;        // the Add's other input
  ir::Node* activation = nullptr;  // optional
  Activation act;
  std::vector<ir::Node*> post_nodes;  // Mul/Add by scalars after the activation
};

// Extends a match that ends in an activation with a following Mul and/or Add by scalar
// constants (an affine step some exporters put after activations): y = act(x) * s + t.
void AbsorbPostLinear(ConvMatch& m) {
  if (m.activation == nullptr) return;
  ir::Node* next = SoleConsumer(m.activation->output(0));
  for (const char* op : {"Mul", "Add"}) {
    if (next == nullptr || !pattern::IsDefaultOp(next, op) || next->num_inputs() != 2) continue;
    const ir::Value* tail =
        m.post_nodes.empty() ? m.activation->output(0) : m.post_nodes.back()->output(0);
    ir::Value* other = next->input(0) == tail ? next->input(1) : next->input(0);
    auto c = pattern::Scalar(other);
    if (!c) continue;
    if (std::string(op) == "Mul") {
      m.act.post_scale = *c;
    } else {
      m.act.post_shift = *c;
    }
    m.post_nodes.push_back(next);
    next = SoleConsumer(next->output(0));
  }
}

// Replaces the matched chain by one FusedConv whose output keeps the chain's last name.
Status ApplyConvMatch(ir::Graph& graph, const ConvMatch& m) {
  ir::Node* last = !m.post_nodes.empty() ? m.post_nodes.back()
                   : m.activation        ? m.activation
                   : m.add               ? m.add
                                         : m.conv;
  ir::Value* final_value = last->output(0);
  std::string final_name = final_value->name();
  ir::NodeSpec spec;
  spec.op_type = "FusedConv";
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(m.conv->name() + "_fused");
  spec.inputs = {m.conv->input(0), m.conv->input(1), m.conv->input(2), m.sum};
  if (m.sum == nullptr) spec.inputs.resize(m.conv->input(2) ? 3 : 2);
  spec.output_names = {graph.UniqueValueName(final_name + "_fused")};
  spec.attributes = m.conv->attributes();
  spec.attributes.push_back(ir::Attribute::String("activation", m.act.op));
  spec.attributes.push_back(ir::Attribute::Floats("activation_params", m.act.params));
  if (m.act.has_post_linear()) {
    spec.attributes.push_back(
        ir::Attribute::Floats("post_linear", {m.act.post_scale, m.act.post_shift}));
  }
  pattern::CarryPrecision(*m.conv, spec);  // already among Conv's attributes; kept explicit
  ASSIGN_OR_RETURN(ir::Node * fused, graph.AddNode(std::move(spec)));
  graph.ReplaceAllUsesWith(final_value, fused->output(0));
  for (auto it = m.post_nodes.rbegin(); it != m.post_nodes.rend(); ++it) {
    RETURN_IF_ERROR(graph.RemoveNode(*it));
  }
  for (ir::Node* n : {m.activation, m.add, m.conv}) {
    if (n != nullptr) RETURN_IF_ERROR(graph.RemoveNode(n));
  }
  return graph.RenameValue(fused->output(0), final_name);
}

// Selector: Conv -> Add(residual) [-> activation].
std::optional<ConvMatch> SelectConvAdd(const ir::Graph& graph, ir::Node* conv,
                                       const SizesByName& sizes) {
  if (!IsFloatConv(*conv, sizes)) return std::nullopt;
  ir::Node* add = SoleConsumer(conv->output(0));
  if (add == nullptr || !pattern::IsDefaultOp(add, "Add") || add->num_inputs() != 2)
    return std::nullopt;
  ir::Value* other = add->input(0) == conv->output(0) ? add->input(1) : add->input(0);
  if (other == nullptr || other == conv->output(0) || other->is_initializer()) return std::nullopt;
  // The residual must have exactly the conv's output sizes (no broadcasting).
  auto a = sizes.find(conv->output(0)->name());
  auto b = sizes.find(other->name());
  if (a == sizes.end() || b == sizes.end() || a->second.sizes != b->second.sizes ||
      a->second.dtype != b->second.dtype || a->second.sizes.size() != 4) {
    return std::nullopt;
  }
  ConvMatch m{conv, add, other, nullptr, {}, {}};
  if (ir::Node* act = SoleConsumer(add->output(0))) {
    if (auto activation = ActivationOf(*act, graph.onnx_opset())) {
      m.activation = act;
      m.act = *activation;
    }
  }
  AbsorbPostLinear(m);
  return m;
}

std::optional<ConvMatch> SelectConvActivation(const ir::Graph& graph, ir::Node* conv,
                                              const SizesByName& sizes) {
  if (!IsFloatConv(*conv, sizes)) return std::nullopt;
  ir::Node* act = SoleConsumer(conv->output(0));
  if (act == nullptr) return std::nullopt;
  auto activation = ActivationOf(*act, graph.onnx_opset());
  if (!activation) return std::nullopt;
  ConvMatch m{conv, nullptr, nullptr, act, *activation, {}};
  AbsorbPostLinear(m);
  return m;
}

}  // namespace

StatusOr<int> FuseConvAdd(ir::Graph& graph, const SizesByName& sizes) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return SelectConvAdd(graph, node, sizes); }, ApplyConvMatch);
}

StatusOr<int> FuseConvActivation(ir::Graph& graph, const SizesByName& sizes) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return SelectConvActivation(graph, node, sizes); },
      ApplyConvMatch);
}

StatusOr<FusionReport> RunFusions(ir::Graph& graph, const SizesByName& sizes) {
  FusionReport report;
  ASSIGN_OR_RETURN(report.activations, FuseDecomposedActivations(graph));
  ASSIGN_OR_RETURN(report.layer_norm, FuseDecomposedLayerNorm(graph, sizes));
  ASSIGN_OR_RETURN(report.gelu, FuseDecomposedGelu(graph));
  ASSIGN_OR_RETURN(report.matmul_bias, FuseMatMulBias(graph, sizes));
  ASSIGN_OR_RETURN(report.matmul_activation, FuseMatMulActivation(graph));
  ASSIGN_OR_RETURN(report.projection_split, FuseProjectionSplit(graph, sizes));
  ASSIGN_OR_RETURN(report.matmul_residual, FuseMatMulResidual(graph, sizes));
  ASSIGN_OR_RETURN(report.attention, FuseAttention(graph, sizes));
  ASSIGN_OR_RETURN(report.conv_add, FuseConvAdd(graph, sizes));
  ASSIGN_OR_RETURN(report.conv_activation, FuseConvActivation(graph, sizes));
  ASSIGN_OR_RETURN(report.qdq_passthrough, FuseQdqPassThrough(graph, sizes));
  ASSIGN_OR_RETURN(report.qdq_linear, FuseQdqLinear(graph, sizes));
  ASSIGN_OR_RETURN(report.qdq_lookup, FuseQdqLookup(graph, sizes));
  ASSIGN_OR_RETURN(report.lowbit_matmul, FuseLowBitMatMul(graph, sizes));
  // What did not fuse into an int8 kernel runs in float: constant weights, not a
  // DequantizeLinear at every inference and a reference kernel.
  ASSIGN_OR_RETURN(report.dequantize_folded, passes::FoldConstantDequantizeCount(graph));
  RETURN_IF_ERROR(graph.SortTopologically());
  return report;
}

}  // namespace qtune::runtime
