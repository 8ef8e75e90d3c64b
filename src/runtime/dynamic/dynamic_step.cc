#include "runtime/dynamic/dynamic_step.h"

#include "ir/builder.h"
#include "ir/subgraph.h"
#include "passes/pipeline.h"
#include "runtime/control/control_flow.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/value_kernels.h"

namespace qtune::runtime {

// One body of a control-flow node: parsed with its outer values as trailing inputs,
// cleaned by the pass pipeline, and run by a GraphRunner (so it is compiled, and cached
// per sizes, like any graph).
class BodyRunner {
 public:
  static StatusOr<std::unique_ptr<BodyRunner>> Create(const ir::Node& node,
                                                      const std::string& attribute,
                                                      const std::vector<RunValue>& formal,
                                                      int64_t opset,
                                                      const GraphRunnerOptions& options) {
    const ir::Attribute* a = node.FindAttribute(attribute);
    if (a == nullptr || a->type != ir::AttributeType::kGraph || a->graphs.size() != 1) {
      return InvalidArgumentError(node.DebugName() + " has no graph attribute '" + attribute + "'");
    }
    auto body = std::unique_ptr<BodyRunner>(new BodyRunner());
    body->model_.opset_imports[""] = opset;
    body->model_.ir_version = ir::IrVersionForOpset(opset);
    ir::SubgraphContext context;
    context.model = &body->model_;
    for (const RunValue& v : formal) {
      // A tensor's type is what it holds; a sequence keeps the type the body declares.
      context.formal_input_types.push_back(v.is_tensor() ? v.tensor().dtype()
                                                         : DataType::kUndefined);
    }
    context.what = attribute + " of " + node.DebugName();
    for (const ir::Value* outer : node.implicit_inputs()) {
      context.outer[outer->name()] = {outer->dtype(), Tensor()};
    }
    ASSIGN_OR_RETURN(body->graph_, ir::ParseSubgraph(a->graphs[0], context));
    passes::PassOptions pass_options;
    pass_options.evaluator = [](const ir::Node& n, std::span<const Tensor> inputs, int64_t o) {
      return EvaluateNode(n, inputs, o);
    };
    auto report = passes::RunPipeline(*body->graph_, pass_options);
    if (!report.ok()) return report.status().WithContext(context.what);
    // Where each body input comes from: formal i, or the node's implicit input k.
    for (size_t i = formal.size(); i < body->graph_->inputs().size(); ++i) {
      const std::string& name = body->graph_->inputs()[i]->name();
      size_t k = 0;
      while (k < node.implicit_inputs().size() && node.implicit_inputs()[k]->name() != name) ++k;
      if (k == node.implicit_inputs().size()) {
        return InternalError(context.what + " reads '" + name + "', not an implicit input");
      }
      body->outer_index_.push_back(k);
    }
    body->what_ = context.what;
    body->runner_ = std::make_unique<GraphRunner>(*body->graph_, options);
    return body;
  }

  StatusOr<std::vector<RunValue>> Run(std::vector<RunValue> formal,
                                      std::span<const RunValue> implicit) {
    for (size_t k : outer_index_) formal.push_back(implicit[k]);
    auto outputs = runner_->Run(formal);
    if (!outputs.ok()) return outputs.status().WithContext(what_);
    return outputs;
  }

 private:
  BodyRunner() = default;
  ir::ModelInfo model_;
  std::unique_ptr<ir::Graph> graph_;
  std::vector<size_t> outer_index_;
  std::string what_;
  std::unique_ptr<GraphRunner> runner_;
};

DynamicStep::DynamicStep(const ir::Node& node, int64_t opset, const GraphRunnerOptions& options)
    : node_(node), opset_(opset), options_(options) {}

DynamicStep::~DynamicStep() = default;

StatusOr<std::unique_ptr<DynamicStep>> DynamicStep::Create(const ir::Node& node, int64_t opset,
                                                           const GraphRunnerOptions& options) {
  const bool onnx = node.domain().empty() || node.domain() == "ai.onnx";
  const std::string& op = node.op_type();
  const bool known = (onnx && (op == "Identity" || op == "If" || op == "Loop" || op == "Scan" ||
                               op == "SequenceMap")) ||
                     ValueKernelRegistry::Get().FindFor(node) != nullptr ||
                     ReferenceRegistry::Get().FindFor(node) != nullptr;
  if (!known) {
    return UnimplementedError(node.DebugName() + ": op " + op + " (opset " + std::to_string(opset) +
                              ") has no kernel");
  }
  return std::unique_ptr<DynamicStep>(new DynamicStep(node, opset, options));
}

StatusOr<BodyRunner*> DynamicStep::Body(const char* attribute,
                                        const std::vector<RunValue>& formal) {
  std::vector<int> key;
  for (const RunValue& v : formal) {
    key.push_back(static_cast<int>(v.kind()) * 64 +
                  static_cast<int>(v.is_tensor() ? v.tensor().dtype() : v.elem_dtype()));
  }
  auto& slot = bodies_[{attribute, key}];
  if (!slot) {
    ASSIGN_OR_RETURN(slot, BodyRunner::Create(node_, attribute, formal, opset_, options_));
  }
  return slot.get();
}

StatusOr<std::vector<RunValue>> DynamicStep::Run(std::span<const RunValue> inputs) {
  const std::string& op = node_.op_type();
  if (ValueKernel kernel = ValueKernelRegistry::Get().FindFor(node_)) {
    return kernel(ValueKernelArgs{node_, inputs.first(node_.num_inputs()), opset_});
  }
  const bool onnx = node_.domain().empty() || node_.domain() == "ai.onnx";
  if (onnx && op == "Identity") {
    return ValueIdentity(ValueKernelArgs{node_, inputs.first(node_.num_inputs()), opset_});
  }
  if (onnx && op == "If") return RunIf(inputs);
  if (onnx && op == "Loop") return RunLoop(inputs);
  if (onnx && op == "Scan") return RunScan(inputs);
  if (onnx && op == "SequenceMap") return RunSequenceMap(inputs);
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < node_.num_inputs(); ++i) {
    if (!inputs[i].is_tensor()) {
      return InvalidArgumentError(node_.DebugName() + ": input " + std::to_string(i) +
                                  " is a sequence or an empty optional; " + op + " takes tensors");
    }
    tensors.push_back(inputs[i].tensor());
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs, EvaluateNode(node_, tensors, opset_));
  std::vector<RunValue> values;
  for (Tensor& t : outputs) values.push_back(RunValue::Of(std::move(t)));
  return values;
}

namespace {

StatusOr<bool> ScalarBool(const ir::Node& node, const RunValue& v, const char* what) {
  if (!v.is_tensor() || !v.tensor().is_valid() || v.tensor().num_elements() != 1 ||
      v.tensor().dtype() != DataType::kBool) {
    return InvalidArgumentError(node.DebugName() + ": " + what + " must be one bool");
  }
  return v.tensor().data<bool>()[0];
}

}  // namespace

StatusOr<std::vector<RunValue>> DynamicStep::RunIf(std::span<const RunValue> inputs) {
  ASSIGN_OR_RETURN(bool cond, ScalarBool(node_, inputs[0], "the condition"));
  ASSIGN_OR_RETURN(BodyRunner * body, Body(cond ? "then_branch" : "else_branch", {}));
  return body->Run({}, Implicit(inputs));
}

StatusOr<std::vector<RunValue>> DynamicStep::RunLoop(std::span<const RunValue> inputs) {
  int64_t trips = INT64_MAX;
  if (node_.num_inputs() > 0 && inputs[0].is_present()) {
    const Tensor& m = inputs[0].tensor();
    if (m.dtype() != DataType::kInt64 || m.num_elements() != 1) {
      return InvalidArgumentError(node_.DebugName() + ": M must be one int64");
    }
    trips = m.data<int64_t>()[0];
  }
  bool cond = true;
  if (node_.num_inputs() > 1 && inputs[1].is_present()) {
    ASSIGN_OR_RETURN(cond, ScalarBool(node_, inputs[1], "cond"));
  }
  const size_t num_carried = node_.num_inputs() > 2 ? node_.num_inputs() - 2 : 0;
  std::vector<RunValue> carried(inputs.begin() + 2, inputs.begin() + 2 + num_carried);
  std::vector<std::vector<Tensor>> scans;
  std::vector<RunValue> formal{RunValue::Of(Tensor::Scalar<int64_t>(0)),
                               RunValue::Of(Tensor::Scalar<bool>(true))};
  formal.insert(formal.end(), carried.begin(), carried.end());
  ASSIGN_OR_RETURN(BodyRunner * body, Body("body", formal));
  for (int64_t t = 0; t < trips && cond; ++t) {
    formal[0] = RunValue::Of(Tensor::Scalar<int64_t>(t));
    formal[1] = RunValue::Of(Tensor::Scalar<bool>(cond));
    for (size_t c = 0; c < num_carried; ++c) formal[2 + c] = carried[c];
    ASSIGN_OR_RETURN(std::vector<RunValue> outs, body->Run(formal, Implicit(inputs)));
    if (outs.size() < 1 + num_carried) {
      return InvalidArgumentError(node_.DebugName() + ": the body has too few outputs");
    }
    ASSIGN_OR_RETURN(cond, ScalarBool(node_, outs[0], "the body's condition output"));
    for (size_t c = 0; c < num_carried; ++c) carried[c] = outs[1 + c];
    scans.resize(outs.size() - 1 - num_carried);
    for (size_t k = 0; k < scans.size(); ++k) {
      if (!outs[1 + num_carried + k].is_tensor()) {
        return UnimplementedError(node_.DebugName() + ": a scan output that is not a tensor");
      }
      scans[k].push_back(outs[1 + num_carried + k].tensor());
    }
  }
  std::vector<RunValue> result = carried;
  for (size_t k = num_carried; k < node_.num_outputs(); ++k) {
    const size_t j = k - num_carried;
    if (j >= scans.size() || scans[j].empty()) {
      // No iteration ran: an empty scan output of the declared element type.
      const ir::Value* out = node_.output(k);
      DataType dtype = out != nullptr && out->dtype() != DataType::kUndefined ? out->dtype()
                                                                              : DataType::kFloat32;
      ASSIGN_OR_RETURN(Tensor empty, Tensor::Allocate(dtype, {0}));
      result.push_back(RunValue::Of(std::move(empty)));
      continue;
    }
    ASSIGN_OR_RETURN(Tensor stacked, StackScanOutputs(node_, scans[j], 0, false));
    result.push_back(RunValue::Of(std::move(stacked)));
  }
  return result;
}

StatusOr<std::vector<RunValue>> DynamicStep::RunScan(std::span<const RunValue> inputs) {
  std::vector<Tensor> tensors, implicit;
  for (const RunValue& v : inputs) {
    if (!v.is_tensor()) {
      return UnimplementedError(node_.DebugName() + ": Scan over sequences is not supported");
    }
  }
  for (size_t i = 0; i < node_.num_inputs(); ++i) tensors.push_back(inputs[i].tensor());
  for (const RunValue& v : Implicit(inputs)) implicit.push_back(v.tensor());
  ASSIGN_OR_RETURN(std::vector<Tensor> outs, EvaluateControlFlow(node_, tensors, implicit, opset_));
  std::vector<RunValue> values;
  for (Tensor& t : outs) values.push_back(RunValue::Of(std::move(t)));
  return values;
}

// SequenceMap: value_kernels.h's RunSequenceMap holds the semantics (lengths, positions,
// element types); the body runs through a nested GraphRunner.
StatusOr<std::vector<RunValue>> DynamicStep::RunSequenceMap(std::span<const RunValue> inputs) {
  std::span<const RunValue> implicit = Implicit(inputs);
  auto run_body = [&](std::span<const Tensor> body_inputs) -> StatusOr<std::vector<Tensor>> {
    std::vector<RunValue> formal;
    for (const Tensor& t : body_inputs) formal.push_back(RunValue::Of(t));
    ASSIGN_OR_RETURN(BodyRunner * body, Body("body", formal));
    ASSIGN_OR_RETURN(std::vector<RunValue> outs, body->Run(formal, implicit));
    std::vector<Tensor> tensors;
    for (RunValue& v : outs) {
      if (!v.is_tensor()) {
        return UnimplementedError(node_.DebugName() + ": a body output that is not a tensor");
      }
      tensors.push_back(std::move(v.tensor()));
    }
    return tensors;
  };
  return runtime::RunSequenceMap(ValueKernelArgs{node_, inputs.first(node_.num_inputs()), opset_},
                                 run_body);
}

}  // namespace qtune::runtime
