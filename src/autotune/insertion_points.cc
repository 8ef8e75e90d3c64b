#include "autotune/insertion_points.h"

#include <algorithm>
#include <string_view>

#include "core/check.h"

namespace qtune::autotune {
namespace {

// How a reader's inputs can be points.
enum class Inputs {
  kLinear,     // input 0, when input 1 is a constant weight
  kFirst,      // input 0 (the others are shapes, scales, axes)
  kAll,        // every input
  kAdd,        // both inputs of an activation + activation Add; else as kLookup
  kLookupStep  // the one input that is not a one-element float constant
};

struct ReaderRule {
  std::string_view op;
  Inputs inputs;
};

// The readers the engine runs in int8 when their inputs come from DequantizeLinear, each
// with the fusion it serves (src/runtime/fusion/). Ops not listed run in float after a DQ,
// so a Q/DQ in front of them only costs time.
constexpr ReaderRule kReaders[] = {
    // qdq_fusion.cc SelectQConv: DQ(x), DQ(w) -> Conv | FusedConv => qtune::QConv.
    {"Conv", Inputs::kLinear},
    // qdq_fusion.cc SelectQConvTranspose => qtune::QConvTranspose (group 1 only).
    {"ConvTranspose", Inputs::kLinear},
    // qdq_fusion.cc SelectQMatMul => qtune::QMatMul (transA = 0, alpha = beta = 1).
    {"Gemm", Inputs::kLinear},
    // qdq_fusion.cc SelectQMatMul => qtune::QMatMul; activation x activation has no int8
    // kernel (placement_rules.cc), so only a MatMul by a constant.
    {"MatMul", Inputs::kLinear},
    // qdq_passthrough_fusion.cc SelectQAdd => qtune::QAdd (equal sizes), or the quantized
    // residual sum of qtune::QConv (conv_fusion.cc FuseConvAdd, then SelectQConv); with a
    // one-element constant, a step of qtune::QLookup (qdq_lookup_fusion.cc).
    {"Add", Inputs::kAdd},
    // qdq_passthrough_fusion.cc SelectPassThrough: the op runs on the int8 data.
    {"MaxPool", Inputs::kFirst},
    {"AveragePool", Inputs::kFirst},
    {"GlobalAveragePool", Inputs::kFirst},
    {"Reshape", Inputs::kFirst},
    {"Flatten", Inputs::kFirst},
    {"Squeeze", Inputs::kFirst},
    {"Unsqueeze", Inputs::kFirst},
    {"Transpose", Inputs::kFirst},
    {"Resize", Inputs::kFirst},  // mode "nearest" only
    {"Concat", Inputs::kAll},
    // qdq_lookup_fusion.cc SelectLookup: DQ -> elementwise chain -> Q => qtune::QLookup.
    {"Relu", Inputs::kLookupStep},
    {"LeakyRelu", Inputs::kLookupStep},
    {"Clip", Inputs::kLookupStep},
    {"Sigmoid", Inputs::kLookupStep},
    {"HardSigmoid", Inputs::kLookupStep},
    {"HardSwish", Inputs::kLookupStep},
    {"Tanh", Inputs::kLookupStep},
    {"Sub", Inputs::kLookupStep},
    {"Mul", Inputs::kLookupStep},
    {"Div", Inputs::kLookupStep},
    {"Pow", Inputs::kLookupStep},
    {"Max", Inputs::kLookupStep},
    {"Min", Inputs::kLookupStep},
    {"Exp", Inputs::kLookupStep},
    {"Abs", Inputs::kLookupStep},
    {"Neg", Inputs::kLookupStep},
    {"Sqrt", Inputs::kLookupStep},
    {"Erf", Inputs::kLookupStep},
    {"Elu", Inputs::kLookupStep},
    {"Selu", Inputs::kLookupStep},
    {"Softplus", Inputs::kLookupStep},
};

// Activations the engine fuses into the producer they directly follow (conv_fusion.cc
// FuseConvActivation / FuseConvAdd, qdq_fusion.cc AbsorbActivation,
// matmul_activation_fusion.cc); a Q/DQ between them would split the fused op.
bool IsFusibleActivation(std::string_view op) {
  return op == "Relu" || op == "LeakyRelu" || op == "Clip" || op == "Sigmoid" ||
         op == "HardSigmoid" || op == "HardSwish" || op == "Tanh";
}

bool IsDefaultDomain(const ir::Node& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

const ReaderRule* FindRule(const ir::Node& node) {
  if (!IsDefaultDomain(node)) return nullptr;
  for (const ReaderRule& rule : kReaders) {
    if (rule.op == node.op_type()) return &rule;
  }
  return nullptr;
}

const ir::Node* ConstantProducer(const ir::Value* value) {
  const ir::Node* p = value != nullptr ? value->producer() : nullptr;
  return p != nullptr && p->op_type() == "Constant" && IsDefaultDomain(*p) ? p : nullptr;
}

bool IsConstant(const ir::Value* value) {
  return value != nullptr && (value->is_initializer() || ConstantProducer(value) != nullptr);
}

bool IsScalarFloatConstant(const ir::Value* value) {
  const Tensor* t = nullptr;
  if (value != nullptr && value->is_initializer()) {
    t = &value->initializer();
  } else if (const ir::Node* c = ConstantProducer(value)) {
    const ir::Attribute* a = c->FindAttribute("value");
    if (a != nullptr && a->type == ir::AttributeType::kTensor) t = &a->t;
  }
  return t != nullptr && t->is_valid() && t->num_elements() == 1 &&
         t->dtype() == DataType::kFloat32;
}

// The tensor itself may carry Q/DQ: a float32 (or not yet typed) activation, not a
// constant, and not statically known to have fewer than 8 elements.
bool IsQuantizableTensor(const ir::Value* value) {
  if (value == nullptr || IsConstant(value)) return false;
  const ir::TensorType& type = value->type();
  if (type.dtype != DataType::kUndefined && type.dtype != DataType::kFloat32) return false;
  if (type.shape && type.shape->is_fully_known() && NumElements(type.shape->sizes()) < 8) {
    return false;
  }
  return true;
}

// The op-level conditions of the fusions (attributes, constant weight, unread indices).
bool ReaderAccepts(const ir::Node& node, const ReaderRule& rule) {
  const std::string& op = node.op_type();
  if (rule.inputs == Inputs::kLinear && !IsConstant(node.input(1))) return false;
  if (op == "ConvTranspose") return node.GetInt("group", 1) == 1;
  if (op == "Gemm") {
    return node.GetInt("transA", 0) == 0 && node.GetFloat("alpha", 1.0f) == 1.0f &&
           node.GetFloat("beta", 1.0f) == 1.0f;
  }
  if (op == "Resize") return node.GetString("mode", "nearest") == "nearest";
  if (op == "MaxPool") {
    const ir::Value* indices = node.output(1);
    return indices == nullptr || (indices->uses().empty() && !indices->is_graph_output());
  }
  return true;
}

// An activation that is the sole reader of a Conv/ConvTranspose/Gemm/MatMul output, or a
// Relu that is the sole reader of an Add output (qtune::QAdd and FusedConv absorb it).
bool ReadsFusedProducer(const ir::Node& node, const ir::Value* input) {
  if (!IsDefaultDomain(node) || !IsFusibleActivation(node.op_type())) return false;
  const ir::Node* producer = input->producer();
  if (producer == nullptr || !IsDefaultDomain(*producer) || input->uses().size() != 1) {
    return false;
  }
  const std::string& op = producer->op_type();
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul") return true;
  return op == "Add" && node.op_type() == "Relu";
}

// Input indices of `node` that are points, ascending.
std::vector<int> PointInputs(const ir::Node& node) {
  const ReaderRule* rule = FindRule(node);
  if (rule == nullptr || !ReaderAccepts(node, *rule)) return {};
  const int n = static_cast<int>(node.num_inputs());
  std::vector<int> candidates;
  switch (rule->inputs) {
    case Inputs::kLinear:
    case Inputs::kFirst:
      candidates = {0};
      break;
    case Inputs::kAll:
      for (int i = 0; i < n; ++i) candidates.push_back(i);
      break;
    case Inputs::kAdd:
      if (n == 2 && !IsConstant(node.input(0)) && !IsConstant(node.input(1))) {
        // qtune::QAdd and the residual sum need equal sizes: no broadcasting.
        const auto& a = node.input(0)->type().shape;
        const auto& b = node.input(1)->type().shape;
        if (a && b && a->is_fully_known() && b->is_fully_known() && a->sizes() != b->sizes()) {
          return {};
        }
        candidates = {0, 1};
        break;
      }
      [[fallthrough]];
    case Inputs::kLookupStep: {
      int data_input = -1;
      for (int i = 0; i < n; ++i) {
        const ir::Value* in = node.input(i);
        if (in == nullptr || IsScalarFloatConstant(in)) continue;
        if (data_input >= 0) return {};  // a second data input: not a function of one value
        data_input = i;
      }
      if (data_input < 0) return {};
      candidates = {data_input};
      break;
    }
  }
  std::vector<int> points;
  for (int i : candidates) {
    const ir::Value* in = node.input(i);
    if (i < n && IsQuantizableTensor(in) && !ReadsFusedProducer(node, in)) points.push_back(i);
  }
  return points;
}

}  // namespace

std::vector<InsertionPoint> CandidatePoints(const RegionTree& tree, int region_id) {
  QTUNE_CHECK(region_id >= 0 && region_id < tree.num_leaves);
  const Region& region = tree.regions[region_id];
  std::vector<InsertionPoint> points;
  for (int j = 0; j < static_cast<int>(region.nodes.size()); ++j) {
    for (int input : PointInputs(*tree.order[region.nodes[j]])) points.push_back({j, input});
  }
  std::sort(points.begin(), points.end());
  return points;
}

ResolvedPoint Resolve(const RegionTree& tree, int region_id, const InsertionPoint& point) {
  QTUNE_CHECK(region_id >= 0 && region_id < tree.num_leaves);
  const Region& region = tree.regions[region_id];
  QTUNE_CHECK(point.node_in_region >= 0 &&
              point.node_in_region < static_cast<int>(region.nodes.size()));
  const ir::Node* node = tree.order[region.nodes[point.node_in_region]];
  QTUNE_CHECK(point.input_index >= 0 && point.input_index < static_cast<int>(node->num_inputs()));
  const ir::Value* tensor = node->input(point.input_index);
  return ResolvedPoint{node->name(), point.input_index, tensor != nullptr ? tensor->name() : ""};
}

}  // namespace qtune::autotune
