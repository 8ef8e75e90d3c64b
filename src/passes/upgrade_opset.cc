#include "passes/upgrade_opset.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "core/float_convert.h"
#include "ir/builder.h"
#include "ir/subgraph.h"
#include "passes/pass_util.h"

namespace qtune::passes {
namespace {

// 22 to 24 changed no op's meaning (added types; DequantizeLinear-23 output_dtype,
// QuantizeLinear-23 precision and Cast-24 round_mode are new optional attributes whose
// defaults keep the old behaviour), so raising the import is the whole upgrade.
constexpr int64_t kMaxTargetOpset = 24;

struct Step {
  int64_t from = 0;  // the graph's opset before the upgrade
  int64_t to = 0;
  // True when the signature change at `version` lies inside (from, to].
  bool Crosses(int64_t version) const { return from < version && version <= to; }
};

Status Unconvertible(const ir::Node& node, const Step& step, std::string_view why) {
  return UnimplementedError(fmt::format(
      "cannot upgrade {} from opset {} to {}: {}; export the model at opset {} or newer from "
      "its framework",
      node.DebugName(), step.from, step.to, why, step.to));
}

StatusOr<ir::Value*> AddInit(ir::Graph& graph, const ir::Node& node, std::string_view what,
                             Tensor tensor) {
  std::string base = (node.name().empty() ? node.op_type() : node.name()) + "_" + std::string(what);
  return graph.AddInitializer(graph.UniqueValueName(base), std::move(tensor));
}

// Moves an ints attribute into input `index` as an int64 [n] initializer (leaves the input
// absent when the attribute is).
Status IntsAttributeToInput(ir::Graph& graph, ir::Node* node, std::string_view attr, size_t index) {
  const ir::Attribute* a = node->FindAttribute(attr);
  if (a == nullptr) return Status::Ok();
  std::vector<int64_t> values =
      a->type == ir::AttributeType::kInt ? std::vector<int64_t>{a->i} : a->ints;
  Tensor t = Tensor::FromVector<int64_t>({static_cast<int64_t>(values.size())}, values);
  ASSIGN_OR_RETURN(ir::Value * v, AddInit(graph, *node, attr, std::move(t)));
  graph.SetNodeInput(node, index, v);
  node->RemoveAttribute(attr);
  return Status::Ok();
}

// A scalar of the node's input-0 float type (float32 when unknown).
StatusOr<Tensor> FloatScalarLike(const ir::Node& node, float value, const Step& step) {
  DataType t = node.input(0) != nullptr ? node.input(0)->dtype() : DataType::kUndefined;
  if (t == DataType::kUndefined || t == DataType::kFloat32) return Tensor::Scalar<float>(value);
  if (t == DataType::kFloat16) {
    ASSIGN_OR_RETURN(Tensor h, Tensor::Allocate(DataType::kFloat16, {}));
    h.data<uint16_t>()[0] = FloatToHalf(value);
    return h;
  }
  return Unconvertible(node, step, fmt::format("its input is {}", DataTypeName(t)));
}

Status FloatAttributeToInput(ir::Graph& graph, ir::Node* node, std::string_view attr, size_t index,
                             const Step& step) {
  const ir::Attribute* a = node->FindAttribute(attr);
  if (a == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(Tensor t, FloatScalarLike(*node, a->f, step));
  ASSIGN_OR_RETURN(ir::Value * v, AddInit(graph, *node, attr, std::move(t)));
  graph.SetNodeInput(node, index, v);
  node->RemoveAttribute(attr);
  return Status::Ok();
}

// Replaces `node` by a node of another op type (or with other inputs) whose outputs take
// over the old outputs' names and uses. Returns the new node.
StatusOr<ir::Node*> Recreate(ir::Graph& graph, ir::Node* node, std::string op_type,
                             std::vector<ir::Value*> inputs, std::vector<ir::Attribute> attrs) {
  ir::NodeSpec spec;
  spec.op_type = std::move(op_type);
  spec.domain = node->domain();
  spec.name = node->name();
  spec.inputs = std::move(inputs);
  spec.attributes = std::move(attrs);
  spec.doc_string = node->doc_string();
  for (ir::Value* out : node->outputs()) {
    spec.output_names.push_back(out == nullptr ? "" : graph.UniqueValueName(out->name() + "_up"));
  }
  std::vector<ir::Value*> old_outputs = node->outputs();
  ASSIGN_OR_RETURN(ir::Node * fresh, graph.AddNode(std::move(spec)));
  std::vector<std::string> names;
  for (size_t i = 0; i < old_outputs.size(); ++i) {
    if (old_outputs[i] == nullptr) continue;
    fresh->output(i)->set_type(old_outputs[i]->type());
    names.push_back(old_outputs[i]->name());
    graph.ReplaceAllUsesWith(old_outputs[i], fresh->output(i));
  }
  RETURN_IF_ERROR(graph.RemoveNode(node));
  size_t k = 0;
  for (size_t i = 0; i < old_outputs.size(); ++i) {
    if (old_outputs[i] == nullptr) continue;
    RETURN_IF_ERROR(graph.RenameValue(fresh->output(i), names[k++]));
  }
  return fresh;
}

// Resize-10 / Upsample: opset 10 resizes with asymmetric coordinates and, for nearest,
// floor rounding; opset 11 needs those spelled out and takes (X, roi, scales).
Status ToResize(ir::Graph& graph, ir::Node* node, ir::Value* scales, const Step& step) {
  std::string mode = node->GetString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear") {
    return Unconvertible(*node, step, "mode '" + mode + "' has no Resize equivalent");
  }
  std::vector<ir::Attribute> attrs = {ir::Attribute::String("mode", mode)};
  std::vector<ir::Value*> inputs = {node->input(0), scales};
  if (step.to >= 11) {
    attrs.push_back(ir::Attribute::String("coordinate_transformation_mode", "asymmetric"));
    if (mode == "nearest") attrs.push_back(ir::Attribute::String("nearest_mode", "floor"));
    ASSIGN_OR_RETURN(ir::Value * roi,
                     AddInit(graph, *node, "roi", Tensor::FromVector<float>({0}, {})));
    inputs = {node->input(0), roi, scales};
  }
  return Recreate(graph, node, "Resize", std::move(inputs), std::move(attrs)).status();
}

Status UpgradeUpsample(ir::Graph& graph, ir::Node* node, const Step& step) {
  ir::Value* scales = node->input(1);
  if (scales == nullptr) {
    std::vector<float> s = node->GetFloats("scales", {});
    if (s.empty()) return Unconvertible(*node, step, "it has no scales");
    ASSIGN_OR_RETURN(scales,
                     AddInit(graph, *node, "scales",
                             Tensor::FromVector<float>({static_cast<int64_t>(s.size())}, s)));
  }
  return ToResize(graph, node, scales, step);
}

// Softmax-family before 13: softmax over the 2-D coercion at `axis` (default 1).
Status UpgradeSoftmax(ir::Graph& graph, ir::Node* node, const Step& step) {
  ir::Value* x = node->input(0);
  int64_t axis = node->GetInt("axis", 1);
  const auto& shape = x->type().shape;
  if (shape.has_value()) {
    int64_t rank = static_cast<int64_t>(shape->rank());
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a == rank - 1) {
      node->SetAttribute(ir::Attribute::Int("axis", a));
      return Status::Ok();
    }
  } else if (axis == -1) {
    return Status::Ok();
  }
  // Flatten(axis) -> op(axis = 1) -> Reshape(Shape(x)). `node` is replaced on the way:
  // its name is kept here for the helper nodes.
  const std::string base = node->name();
  auto add = [&](std::string op, std::vector<ir::Value*> in,
                 std::vector<ir::Attribute> attrs) -> StatusOr<ir::Value*> {
    ir::NodeSpec spec;
    spec.op_type = op;
    spec.name = graph.UniqueNodeName(base + "_" + op);
    spec.inputs = std::move(in);
    spec.attributes = std::move(attrs);
    spec.output_names = {graph.UniqueValueName(x->name() + "_" + op)};
    ASSIGN_OR_RETURN(ir::Node * n, graph.AddNode(std::move(spec)));
    return n->output(0);
  };
  ASSIGN_OR_RETURN(ir::Value * flat, add("Flatten", {x}, {ir::Attribute::Int("axis", axis)}));
  ASSIGN_OR_RETURN(ir::Value * sizes, add("Shape", {x}, {}));
  ASSIGN_OR_RETURN(ir::Node * op,
                   Recreate(graph, node, node->op_type(), {flat}, {ir::Attribute::Int("axis", 1)}));
  ir::Value* op_out = op->output(0);
  std::string name = op_out->name();
  ir::TensorType type = op_out->type();
  RETURN_IF_ERROR(graph.RenameValue(op_out, graph.UniqueValueName(name + "_2d")));
  op_out->set_type({type.dtype, std::nullopt});
  ASSIGN_OR_RETURN(ir::Value * reshaped, add("Reshape", {op_out, sizes}, {}));
  graph.ReplaceAllUsesWith(op_out, reshaped);
  graph.SetNodeInput(reshaped->producer(), 0, op_out);  // ReplaceAllUsesWith moved it too
  reshaped->set_type(type);
  return graph.RenameValue(reshaped, name);
}

bool IsReduce18(std::string_view op) {
  static constexpr std::array<std::string_view, 9> kOps = {
      "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",     "ReduceL1",
      "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

bool HasSubgraph(const ir::Node& node) {
  return std::any_of(node.attributes().begin(), node.attributes().end(), [](const auto& a) {
    return a.type == ir::AttributeType::kGraph || a.type == ir::AttributeType::kGraphs;
  });
}

// Upgrades every body of an If/Loop/Scan (and any node with graph attributes): each is
// parsed into a graph of its own, with the outer values it reads as extra inputs
// (ir/subgraph.h), upgraded recursively and written back into the attribute.
Status UpgradeBodies(ir::Graph& graph, ir::Node* node, const Step& step) {
  if (node->op_type() == "Scan" && step.Crosses(9)) {
    return Unconvertible(*node, step, "Scan-8 (batched, with sequence_lens)");
  }
  ir::SubgraphContext context;
  context.model = &graph.info();
  context.keep_declared_inputs = true;
  for (const ir::Value* v : node->implicit_inputs()) {
    // The type only declares the temporary input; it is not written back.
    DataType dtype = v->dtype() == DataType::kUndefined ? DataType::kFloat32 : v->dtype();
    context.outer[v->name()] = ir::OuterValue{dtype, Tensor()};
  }
  std::vector<ir::Attribute> rewritten;
  for (const ir::Attribute& a : node->attributes()) {
    if (a.type != ir::AttributeType::kGraph && a.type != ir::AttributeType::kGraphs) continue;
    ir::Attribute out = a;
    out.graphs.clear();
    context.what = "subgraph '" + a.name + "' of " + node->DebugName();
    for (const std::string& bytes : a.graphs) {
      ASSIGN_OR_RETURN(std::vector<std::string> outer, ir::SubgraphOuterNames(bytes));
      ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> body, ir::ParseSubgraph(bytes, context));
      auto upgraded = UpgradeOpset(*body, UpgradeOpsetOptions{step.to});
      if (!upgraded.ok()) return upgraded.status().WithContext(context.what);
      ASSIGN_OR_RETURN(ir::Attribute body_attribute,
                       ir::SubgraphAttribute(a.name, *body, outer.size()));
      out.graphs.push_back(std::move(body_attribute.graphs[0]));
    }
    rewritten.push_back(std::move(out));
  }
  for (ir::Attribute& a : rewritten) node->SetAttribute(std::move(a));
  return Status::Ok();
}

Status UpgradeNode(ir::Graph& graph, ir::Node* node, const Step& step) {
  const std::string& op = node->op_type();
  if (HasSubgraph(*node)) return UpgradeBodies(graph, node, step);
  if (op == "Slice" && step.Crosses(10)) {
    if (!node->HasAttribute("starts")) return Status::Ok();
    RETURN_IF_ERROR(IntsAttributeToInput(graph, node, "starts", 1));
    RETURN_IF_ERROR(IntsAttributeToInput(graph, node, "ends", 2));
    return IntsAttributeToInput(graph, node, "axes", 3);
  }
  if (op == "TopK" && step.Crosses(10)) return IntsAttributeToInput(graph, node, "k", 1);
  if (op == "Upsample" && step.Crosses(10)) return UpgradeUpsample(graph, node, step);
  if (op == "Resize" && step.Crosses(11)) {
    if (node->num_inputs() < 2 || node->input(1) == nullptr) {
      return Unconvertible(*node, step, "Resize-10 without scales");
    }
    return ToResize(graph, node, node->input(1), step);
  }
  if (op == "Clip" && step.Crosses(11)) {
    RETURN_IF_ERROR(FloatAttributeToInput(graph, node, "min", 1, step));
    return FloatAttributeToInput(graph, node, "max", 2, step);
  }
  if (op == "Pad" && step.Crosses(11)) {
    RETURN_IF_ERROR(IntsAttributeToInput(graph, node, "pads", 1));
    const ir::Attribute* value = node->FindAttribute("value");
    if (value != nullptr && value->f == 0.0f) node->RemoveAttribute("value");
    return FloatAttributeToInput(graph, node, "value", 2, step);
  }
  if (op == "Scatter" && step.Crosses(11)) {
    return Recreate(graph, node, "ScatterElements", node->inputs(), node->attributes()).status();
  }
  if (op == "Dropout" && step.Crosses(12)) {
    node->RemoveAttribute("is_test");
    return FloatAttributeToInput(graph, node, "ratio", 1, step);
  }
  if ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") && step.Crosses(13)) {
    return IntsAttributeToInput(graph, node, "axes", 1);
  }
  if (op == "Split" && step.Crosses(13))
    RETURN_IF_ERROR(IntsAttributeToInput(graph, node, "split", 1));
  if (op == "Split" && step.Crosses(18) && node->input(1) == nullptr &&
      !node->HasAttribute("num_outputs")) {
    node->SetAttribute(
        ir::Attribute::Int("num_outputs", static_cast<int64_t>(node->num_outputs())));
  }
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && step.Crosses(13)) {
    return UpgradeSoftmax(graph, node, step);
  }
  if (IsReduce18(op) && step.Crosses(18)) return IntsAttributeToInput(graph, node, "axes", 1);
  if (op == "BatchNormalization" && step.Crosses(9)) {
    if (node->GetInt("spatial", 1) != 1) return Unconvertible(*node, step, "spatial = 0");
    node->RemoveAttribute("spatial");
    node->RemoveAttribute("consumed_inputs");
    node->RemoveAttribute("is_test");
  }
  if (op == "GroupNormalization" && step.Crosses(21)) {
    return Unconvertible(*node, step, "opset 21 changed the shape of scale and bias");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<bool> UpgradeOpset(ir::Graph& graph, const UpgradeOpsetOptions& options) {
  if (options.target_opset > kMaxTargetOpset) {
    return InvalidArgumentError(
        fmt::format("opset upgrade target {} is above {}, the newest "
                    "qtune can convert to",
                    options.target_opset, kMaxTargetOpset));
  }
  const Step step{graph.onnx_opset(), options.target_opset};
  if (step.from >= step.to) return false;
  for (ir::Node* node : graph.nodes()) {
    if (!IsDefaultDomain(*node)) continue;
    RETURN_IF_ERROR(UpgradeNode(graph, node, step));
  }
  graph.info().opset_imports.erase("ai.onnx");
  graph.info().opset_imports[""] = step.to;
  graph.info().ir_version = std::max(graph.info().ir_version, ir::IrVersionForOpset(step.to));
  RETURN_IF_ERROR(graph.SortTopologically());
  return true;
}

}  // namespace qtune::passes
