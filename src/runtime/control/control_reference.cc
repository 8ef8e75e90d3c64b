// If, Loop and Scan for the reference executor: bodies run through RunReference, one
// iteration at a time, with whatever sizes each iteration produces (no compile-time sizes
// needed, so this also runs what the engine refuses: the oracle for the kernels).
#include <cstring>

#include "core/shape.h"
#include "ir/builder.h"
#include "ir/subgraph.h"
#include "runtime/control/control_flow.h"
#include "runtime/reference/reference_executor.h"

namespace qtune::runtime {
namespace {

struct Body {
  std::unique_ptr<ir::Graph> graph;
  std::string what;

  StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> formal) const {
    NamedTensors inputs;
    for (size_t i = 0; i < formal.size(); ++i) {
      inputs.emplace_back(graph->inputs()[i]->name(), formal[i]);
    }
    auto outputs = RunReference(*graph, inputs);
    if (!outputs.ok()) return outputs.status().WithContext(what);
    std::vector<Tensor> result;
    for (auto& [name, t] : *outputs) result.push_back(std::move(t));
    result.resize(graph->outputs().size());
    return result;
  }
};

// Outer values become initializers of the body: every one is known here.
StatusOr<Body> ParseBody(const ir::Node& node, const std::string& attribute,
                         std::span<const Tensor> implicit, std::vector<DataType> formal,
                         int64_t opset) {
  const ir::Attribute* a = node.FindAttribute(attribute);
  if (a == nullptr || a->type != ir::AttributeType::kGraph || a->graphs.size() != 1) {
    return InvalidArgumentError(node.DebugName() + " has no graph attribute '" + attribute + "'");
  }
  ir::ModelInfo model;
  model.opset_imports[""] = opset;
  model.ir_version = ir::IrVersionForOpset(opset);
  ir::SubgraphContext context;
  context.model = &model;
  context.formal_input_types = std::move(formal);
  context.what = attribute + " of " + node.DebugName();
  for (size_t k = 0; k < node.implicit_inputs().size() && k < implicit.size(); ++k) {
    context.outer[node.implicit_inputs()[k]->name()] = {implicit[k].dtype(), implicit[k]};
  }
  Body body;
  body.what = context.what;
  ASSIGN_OR_RETURN(body.graph, ir::ParseSubgraph(a->graphs[0], context));
  return body;
}

// Stacks equally sized tensors along a new axis `axis` (reversed when `reverse`).
StatusOr<Tensor> Stack(const ir::Node& node, const std::vector<Tensor>& parts, int64_t axis,
                       bool reverse) {
  if (parts.empty()) return Tensor::Allocate(DataType::kFloat32, {0});
  std::vector<int64_t> sizes = parts[0].sizes();
  for (const Tensor& p : parts) {
    if (p.sizes() != sizes || p.dtype() != parts[0].dtype()) {
      return InvalidArgumentError(node.DebugName() +
                                  ": a scan output changes sizes between "
                                  "iterations ([" +
                                  SizesToString(sizes) + "] and [" + SizesToString(p.sizes()) +
                                  "])");
    }
  }
  const int64_t n = static_cast<int64_t>(parts.size());
  if (axis < 0) axis += static_cast<int64_t>(sizes.size()) + 1;
  int64_t outer = 1, inner = static_cast<int64_t>(DataTypeSize(parts[0].dtype()));
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    (d < axis ? outer : inner) *= sizes[d];
  }
  std::vector<int64_t> out_sizes = sizes;
  out_sizes.insert(out_sizes.begin() + axis, n);
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(parts[0].dtype(), out_sizes));
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (int64_t t = 0; t < n; ++t) {
    const auto* src = static_cast<const std::byte*>(parts[reverse ? n - 1 - t : t].raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + (o * n + t) * inner, src + o * inner, static_cast<size_t>(inner));
    }
  }
  return out;
}

StatusOr<Tensor> Slice(const Tensor& full, int64_t axis, int64_t index) {
  std::vector<int64_t> sizes = full.sizes();
  const int64_t n = sizes[axis];
  int64_t outer = 1, inner = static_cast<int64_t>(DataTypeSize(full.dtype()));
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d != axis) (d < axis ? outer : inner) *= sizes[d];
  }
  sizes.erase(sizes.begin() + axis);
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(full.dtype(), sizes));
  const auto* src = static_cast<const std::byte*>(full.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(static_cast<std::byte*>(out.raw_data()) + o * inner, src + (o * n + index) * inner,
                static_cast<size_t>(inner));
  }
  return out;
}

StatusOr<std::vector<Tensor>> EvaluateIf(const ir::Node& node, std::span<const Tensor> inputs,
                                         std::span<const Tensor> implicit, int64_t opset) {
  const bool cond = inputs[0].data<bool>()[0];
  ASSIGN_OR_RETURN(Body body,
                   ParseBody(node, cond ? "then_branch" : "else_branch", implicit, {}, opset));
  return body.Run({});
}

StatusOr<std::vector<Tensor>> EvaluateLoop(const ir::Node& node, std::span<const Tensor> inputs,
                                           std::span<const Tensor> implicit, int64_t opset) {
  std::vector<DataType> formal{DataType::kInt64, DataType::kBool};
  for (size_t i = 2; i < inputs.size(); ++i) formal.push_back(inputs[i].dtype());
  ASSIGN_OR_RETURN(Body body, ParseBody(node, "body", implicit, formal, opset));
  const int64_t m = inputs[0].is_valid() ? inputs[0].data<int64_t>()[0] : INT64_MAX;
  bool cond = inputs[1].is_valid() ? inputs[1].data<bool>()[0] : true;
  std::vector<Tensor> carried(inputs.begin() + 2, inputs.end());
  std::vector<std::vector<Tensor>> scans;
  for (int64_t t = 0; t < m && cond; ++t) {
    std::vector<Tensor> args{Tensor::Scalar<int64_t>(t), Tensor::Scalar<bool>(cond)};
    args.insert(args.end(), carried.begin(), carried.end());
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, body.Run(args));
    cond = outs[0].data<bool>()[0];
    for (size_t c = 0; c < carried.size(); ++c) carried[c] = outs[1 + c];
    scans.resize(outs.size() - 1 - carried.size());
    for (size_t k = 0; k < scans.size(); ++k) scans[k].push_back(outs[1 + carried.size() + k]);
  }
  std::vector<Tensor> result = carried;
  for (size_t k = carried.size(); k < node.num_outputs(); ++k) {
    const size_t j = k - carried.size();
    ASSIGN_OR_RETURN(Tensor stacked,
                     Stack(node, j < scans.size() ? scans[j] : std::vector<Tensor>{}, 0, false));
    result.push_back(std::move(stacked));
  }
  return result;
}

StatusOr<std::vector<Tensor>> EvaluateScan(const ir::Node& node, std::span<const Tensor> inputs,
                                           std::span<const Tensor> implicit, int64_t opset) {
  if (opset < 9) return UnimplementedError(node.DebugName() + ": Scan-8 is not supported");
  const size_t num_scan = static_cast<size_t>(node.GetInt("num_scan_inputs", 0));
  if (num_scan < 1 || num_scan > inputs.size()) {
    return InvalidArgumentError(node.DebugName() + ": bad num_scan_inputs");
  }
  const size_t num_state = inputs.size() - num_scan;
  const auto in_axes = node.GetInts("scan_input_axes", {});
  const auto in_dirs = node.GetInts("scan_input_directions", {});
  const auto out_axes = node.GetInts("scan_output_axes", {});
  const auto out_dirs = node.GetInts("scan_output_directions", {});
  auto at = [](const std::vector<int64_t>& v, size_t i) { return i < v.size() ? v[i] : 0; };
  std::vector<DataType> formal;
  for (const Tensor& t : inputs) formal.push_back(t.dtype());
  ASSIGN_OR_RETURN(Body body, ParseBody(node, "body", implicit, formal, opset));
  std::vector<int64_t> axes;
  for (size_t j = 0; j < num_scan; ++j) {
    int64_t axis = at(in_axes, j);
    if (axis < 0) axis += static_cast<int64_t>(inputs[num_state + j].rank());
    axes.push_back(axis);
  }
  const int64_t trip = inputs[num_state].size(static_cast<size_t>(axes[0]));
  std::vector<Tensor> states(inputs.begin(), inputs.begin() + num_state);
  std::vector<std::vector<Tensor>> scans(node.num_outputs() - num_state);
  for (int64_t t = 0; t < trip; ++t) {
    std::vector<Tensor> args = states;
    for (size_t j = 0; j < num_scan; ++j) {
      const int64_t index = at(in_dirs, j) ? trip - 1 - t : t;
      ASSIGN_OR_RETURN(Tensor slice, Slice(inputs[num_state + j], axes[j], index));
      args.push_back(std::move(slice));
    }
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, body.Run(args));
    for (size_t c = 0; c < num_state; ++c) states[c] = outs[c];
    for (size_t k = 0; k < scans.size(); ++k) scans[k].push_back(outs[num_state + k]);
  }
  std::vector<Tensor> result = states;
  for (size_t k = 0; k < scans.size(); ++k) {
    ASSIGN_OR_RETURN(Tensor stacked, Stack(node, scans[k], at(out_axes, k), at(out_dirs, k) != 0));
    result.push_back(std::move(stacked));
  }
  return result;
}

}  // namespace

StatusOr<Tensor> StackScanOutputs(const ir::Node& node, const std::vector<Tensor>& parts,
                                  int64_t axis, bool reverse) {
  return Stack(node, parts, axis, reverse);
}

bool HasSubgraphAttribute(const ir::Node& node) {
  for (const ir::Attribute& a : node.attributes()) {
    if (a.type == ir::AttributeType::kGraph || a.type == ir::AttributeType::kGraphs) return true;
  }
  return false;
}

StatusOr<std::vector<Tensor>> EvaluateControlFlow(const ir::Node& node,
                                                  std::span<const Tensor> inputs,
                                                  std::span<const Tensor> implicit_inputs,
                                                  int64_t opset) {
  const std::string& op = node.op_type();
  const bool onnx = node.domain().empty() || node.domain() == "ai.onnx";
  if (onnx && op == "If") return EvaluateIf(node, inputs, implicit_inputs, opset);
  if (onnx && op == "Loop") return EvaluateLoop(node, inputs, implicit_inputs, opset);
  if (onnx && op == "Scan") return EvaluateScan(node, inputs, implicit_inputs, opset);
  return UnimplementedError(node.DebugName() + ": op " + op +
                            " has subgraphs and no reference implementation");
}

}  // namespace qtune::runtime
