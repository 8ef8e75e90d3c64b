// ExportOrtLayout: ExportQdq writes the pairs of the plan PlanOrtLayout made; the steps
// here turn that into ONNX Runtime's layout and its variations (ort_layout.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "ir/builder.h"
#include "ir/verify.h"
#include "quant/ort_layout.h"
#include "quant/ort_layout_internal.h"

namespace qtune::quant {
namespace {

bool IsOp(const ir::Node* node, const char* op) {
  return node != nullptr && node->op_type() == op &&
         (node->domain().empty() || node->domain() == "ai.onnx");
}

ir::Node* QuantizeReader(const ir::Value* value) {
  for (const ir::Use& use : value->uses()) {
    if (IsOp(use.node, "QuantizeLinear") && use.input_index == 0) return use.node;
  }
  return nullptr;
}

// Removes each Relu whose output site says it folds into its Q: the Q reads the Relu's
// input instead (the Relu's readers all read the pair's DequantizeLinear already).
Status FoldRelus(ir::Graph& graph, const QuantPlan& plan) {
  for (const QuantSite& site : plan.sites) {
    if (!site.enabled || site.role.find(kReluFoldedRole) == std::string::npos) continue;
    ir::Value* out = graph.FindValue(site.value);
    ir::Node* relu = out != nullptr ? out->producer() : nullptr;
    ir::Node* q = out != nullptr ? QuantizeReader(out) : nullptr;
    if (!IsOp(relu, "Relu") || q == nullptr || out->uses().size() != 1 || out->is_graph_output()) {
      continue;  // a reader kept the float tensor: keep the Relu
    }
    graph.SetNodeInput(q, 0, relu->input(0));
    RETURN_IF_ERROR(graph.RemoveNode(relu));
  }
  return Status::Ok();
}

// The per-tensor scale of an activation DequantizeLinear, or nullopt.
std::optional<float> ActivationScale(const ir::Value* v) {
  const ir::Node* dq = v != nullptr ? v->producer() : nullptr;
  if (!IsOp(dq, "DequantizeLinear") || dq->input(1) == nullptr || !dq->input(1)->is_initializer())
    return std::nullopt;
  const Tensor& s = dq->input(1)->initializer();
  if (s.dtype() != DataType::kFloat32 || s.num_elements() != 1) return std::nullopt;
  return s.data<float>()[0];
}

// Bias of a Conv / ConvTranspose / Gemm whose input and weight are dequantized:
// DequantizeLinear(int32 round(b / (s_x * s_w)), s_x * s_w, int32 zeros).
Status QuantizeBiases(ir::Graph& graph, const OrtLayoutOptions& options) {
  for (ir::Node* node : graph.nodes()) {
    if (!IsOp(node, "Conv") && !IsOp(node, "ConvTranspose") && !IsOp(node, "Gemm")) continue;
    ir::Value* b = node->num_inputs() > 2 ? node->input(2) : nullptr;
    std::optional<float> x_scale = ActivationScale(node->input(0));
    const ir::Node* w_dq = node->input(1) != nullptr ? node->input(1)->producer() : nullptr;
    if (b == nullptr || !b->is_initializer() || b->is_graph_input() || !x_scale ||
        !IsOp(w_dq, "DequantizeLinear") || !w_dq->input(1)->is_initializer() ||
        b->initializer().dtype() != DataType::kFloat32) {
      continue;
    }
    const Tensor& bias = b->initializer();
    const Tensor& w_scale = w_dq->input(1)->initializer();
    const int64_t n = bias.num_elements();
    if (w_scale.num_elements() != 1 && w_scale.num_elements() != n) continue;
    const bool per_channel = w_scale.num_elements() == n && n > 1;
    const std::vector<int64_t> scale_sizes =
        per_channel ? std::vector<int64_t>{n} : std::vector<int64_t>{};
    ASSIGN_OR_RETURN(Tensor q, Tensor::Allocate(DataType::kInt32, {n}));
    ASSIGN_OR_RETURN(Tensor scale, Tensor::Allocate(DataType::kFloat32, scale_sizes));
    ASSIGN_OR_RETURN(Tensor zero, Tensor::Allocate(DataType::kInt32, scale_sizes));
    for (int64_t c = 0; c < n; ++c) {
      const float s = *x_scale * w_scale.data<float>()[w_scale.num_elements() == 1 ? 0 : c];
      if (per_channel || c == 0) scale.data<float>()[per_channel ? c : 0] = s;
      const double v = std::nearbyint(static_cast<double>(bias.data<float>()[c]) / s);
      q.data<int32_t>()[c] = static_cast<int32_t>(std::clamp(v, -2147483648.0, 2147483647.0));
    }
    const std::string base = b->name();
    ASSIGN_OR_RETURN(ir::Value * qv, graph.AddInitializer(
                                         graph.UniqueValueName(base + "_quantized"), std::move(q)));
    ASSIGN_OR_RETURN(ir::Value * sv, graph.AddInitializer(graph.UniqueValueName(base + "_scale"),
                                                          std::move(scale)));
    std::vector<ir::Value*> inputs = {qv, sv};
    if (options.zero_points) {
      ASSIGN_OR_RETURN(ir::Value * zv,
                       graph.AddInitializer(graph.UniqueValueName(base + "_zero_point"), zero));
      inputs.push_back(zv);
    }
    ir::NodeSpec spec;
    spec.op_type = "DequantizeLinear";
    spec.name = graph.UniqueNodeName(base + "_DequantizeLinear");
    spec.inputs = std::move(inputs);
    spec.output_names = {graph.UniqueValueName(base + "_dequantized")};
    if (per_channel) spec.attributes.push_back(ir::Attribute::Int("axis", 0));
    ASSIGN_OR_RETURN(ir::Node * dq, graph.AddNode(std::move(spec)));
    dq->output(0)->set_type(ir::TensorType{DataType::kFloat32, Shape::FromSizes(bias.sizes())});
    graph.SetNodeInput(node, 2, dq->output(0));
    if (b->uses().empty() && !b->is_graph_output()) RETURN_IF_ERROR(graph.RemoveValue(b));
  }
  return Status::Ok();
}

// Activation pairs (Q and its DQs share scale and zero point): the uint8 parameters
// written by ExportQdq become int8 ones with zero point - 128 (the same real values).
Status ShiftToInt8(ir::Graph& graph) {
  std::set<ir::Value*> shifted;
  for (ir::Node* q : graph.nodes()) {
    if (!IsOp(q, "QuantizeLinear") || q->input(2) == nullptr) continue;
    ir::Value* zp = q->input(2);
    if (!zp->is_initializer()) continue;
    const bool done = shifted.count(zp) > 0;  // a scale group's shared zero point
    if (!done && zp->initializer().dtype() != DataType::kUint8) continue;
    if (!done) {
      shifted.insert(zp);
      const Tensor& u8 = zp->initializer();
      ASSIGN_OR_RETURN(Tensor s8, Tensor::Allocate(DataType::kInt8, u8.sizes()));
      for (int64_t i = 0; i < u8.num_elements(); ++i) {
        s8.data<int8_t>()[i] = static_cast<int8_t>(int32_t{u8.data<uint8_t>()[i]} - 128);
      }
      RETURN_IF_ERROR(graph.SetInitializer(zp, std::move(s8)));
    }
    ir::Value* out = q->output(0);
    out->set_type(ir::TensorType{DataType::kInt8, out->type().shape});
  }
  return Status::Ok();
}

bool AllZero(const Tensor& t) {
  for (std::byte b : t.bytes()) {
    if (b != std::byte{0}) return false;
  }
  return true;
}

// Drops every zero-point input the form allows to omit (options.zero_points == false).
void OmitZeroPoints(ir::Graph& graph) {
  const bool output_dtype = graph.onnx_opset() >= 21;
  for (ir::Node* node : graph.nodes()) {
    const bool is_q = IsOp(node, "QuantizeLinear");
    if (!is_q && !IsOp(node, "DequantizeLinear")) continue;
    if (node->num_inputs() < 3 || node->input(2) == nullptr) continue;
    const ir::Value* zp = node->input(2);
    if (!zp->is_initializer() || !AllZero(zp->initializer())) continue;
    const DataType type = zp->initializer().dtype();
    if (is_q && type != DataType::kUint8) {
      if (!output_dtype) continue;  // only opset 21 can name the output type without it
      node->SetAttribute(ir::Attribute::Int("output_dtype", static_cast<int64_t>(type)));
    }
    graph.SetNodeInput(node, 2, nullptr);
  }
}

// Ops whose opset-10 form means what their opset-13 form means for the layout's graphs.
bool HasOpset10Meaning(const ir::Node& node) {
  static const std::set<std::string> kOps = {"Conv",
                                             "ConvTranspose",
                                             "Gemm",
                                             "MatMul",
                                             "Add",
                                             "Mul",
                                             "Sub",
                                             "Relu",
                                             "MaxPool",
                                             "AveragePool",
                                             "Concat",
                                             "Reshape",
                                             "Flatten",
                                             "GlobalAveragePool",
                                             "Transpose",
                                             "Sigmoid",
                                             "QuantizeLinear",
                                             "DequantizeLinear"};
  if (!(node.domain().empty() || node.domain() == "ai.onnx")) return true;
  if (!kOps.count(node.op_type())) return false;
  if (node.op_type() == "Gemm" && (node.num_inputs() < 3 || node.input(2) == nullptr)) {
    return false;  // C became optional at 11
  }
  if (node.op_type() == "Flatten" && node.GetInt("axis", 1) < 0) return false;
  if ((node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear") &&
      node.input(1) != nullptr && node.input(1)->is_initializer() &&
      node.input(1)->initializer().num_elements() != 1) {
    return false;  // per-axis needs 13
  }
  return true;
}

Status RelabelOpset10(ir::Graph& graph) {
  for (const ir::Node* node : graph.nodes()) {
    if (!HasOpset10Meaning(*node)) {
      return InvalidArgumentError(fmt::format(
          "the opset-10 form of the ONNX Runtime layout cannot hold {} (op {} changed meaning "
          "or needs a later opset); use opset 13 or later",
          node->DebugName(), node->op_type()));
    }
  }
  graph.info().opset_imports.erase("ai.onnx");
  graph.info().opset_imports[""] = 10;
  graph.info().ir_version = ir::IrVersionForOpset(10);
  return Status::Ok();
}

}  // namespace

StatusOr<ExportReport> ExportOrtLayout(ir::Graph& graph, const QuantPlan& plan,
                                       const OrtLayoutOptions& options) {
  const int64_t opset = options.opset;
  if (opset != 0 && opset != 10 && opset != 13 && opset != 19 && opset != 21) {
    return InvalidArgumentError(
        fmt::format("ONNX Runtime layout opset {}: use 10, 13, 19 or 21 (0: the graph's)", opset));
  }
  if (opset == 10 && options.per_channel) {
    return InvalidArgumentError(
        "the opset-10 form of DequantizeLinear has no axis: per-channel weights need opset 13; "
        "set per_channel = false");
  }
  if (opset == 10 && graph.onnx_opset() > 13) {
    return InvalidArgumentError(fmt::format(
        "the graph is at opset {}; the opset-10 form is written only for graphs at opset <= 13",
        graph.onnx_opset()));
  }
  ExportOptions export_options;
  export_options.min_opset = opset > 10 ? opset : 0;
  export_options.fold_casts = false;
  ASSIGN_OR_RETURN(ExportReport report, ExportQdq(graph, plan, export_options));
  RETURN_IF_ERROR(FoldRelus(graph, plan));
  if (options.activations == OrtActivationType::kInt8) RETURN_IF_ERROR(ShiftToInt8(graph));
  if (options.int32_bias) RETURN_IF_ERROR(QuantizeBiases(graph, options));
  if (opset == 10) RETURN_IF_ERROR(RelabelOpset10(graph));
  if (!options.zero_points) OmitZeroPoints(graph);
  report.opset_after = graph.onnx_opset();
  RETURN_IF_ERROR(graph.SortTopologically());
  RETURN_IF_ERROR(
      ir::Verify(graph).WithContext("the ONNX Runtime layout graph is invalid (a qtune bug)"));
  return report;
}

}  // namespace qtune::quant
