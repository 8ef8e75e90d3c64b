#include "runtime/dynamic/graph_runner.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/shape.h"
#include "runtime/control/control_flow.h"
#include "runtime/dynamic/dynamic_step.h"
#include "runtime/dynamic/extract_graph.h"
#include "runtime/plan/plan_executor.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::runtime {

using Store = std::unordered_map<std::string, RunValue>;

// A value a stage's nodes read that none of them produces (and not an initializer).
struct Boundary {
  const ir::Value* value = nullptr;
  bool sets_sizes = false;  // read where its values set sizes (SizeValueInputs)
};

struct CompiledStage;

// The nodes of one stage, before sizes are known; its compiled variants by key.
struct StageTemplate {
  const ir::Graph* parent = nullptr;
  std::vector<const ir::Node*> nodes;  // parent's nodes, topological order
  std::vector<Boundary> boundary;
  std::vector<std::string> outputs;  // the runner's graph outputs these nodes produce
  std::map<std::vector<int64_t>, std::unique_ptr<CompiledStage>> variants;
};

// One stage compiled for the sizes (and bound values) of its boundary.
struct CompiledStage {
  std::unique_ptr<ir::Graph> graph;    // the stage's nodes, its boundary as inputs
  std::unique_ptr<PlanExecutor> plan;  // its static nodes; null when none
  std::optional<PlanBinding> binding;
  std::vector<std::unique_ptr<DynamicStep>> dynamic;  // run after the plan, in order
  std::unique_ptr<StageTemplate> next;                // null: the last stage
};

namespace {

bool IsOnnx(const ir::Node& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

// Deferred nodes that never become static, whatever the sizes and constants they get.
bool AlwaysDynamic(const ir::Node& node) {
  static const auto* ops =
      new std::set<std::string>{"NonZero", "NonMaxSuppression", "Unique", "Compress"};
  return HasSubgraphAttribute(node) || (IsOnnx(node) && ops->count(node.op_type()) > 0);
}

bool Binds(const Boundary& b, const RunValue& v) {
  return b.sets_sizes && v.is_tensor() && v.tensor().is_valid() &&
         v.tensor().num_elements() <= GraphRunner::kMaxBoundElements;
}

std::unique_ptr<StageTemplate> MakeTemplate(const ir::Graph& parent,
                                            std::vector<const ir::Node*> nodes,
                                            const std::set<std::string>& graph_outputs) {
  auto t = std::make_unique<StageTemplate>();
  t->parent = &parent;
  std::unordered_set<const ir::Value*> produced;
  for (const ir::Node* node : nodes) {
    for (const ir::Value* out : node->outputs()) {
      if (out == nullptr) continue;
      produced.insert(out);
      if (graph_outputs.count(out->name())) t->outputs.push_back(out->name());
    }
  }
  std::unordered_map<const ir::Value*, size_t> index;
  auto add = [&](const ir::Value* v, bool sets_sizes) {
    if (v == nullptr || produced.count(v) || v->is_initializer()) return;
    auto [it, inserted] = index.emplace(v, t->boundary.size());
    if (inserted) t->boundary.push_back({v, false});
    t->boundary[it->second].sets_sizes |= sets_sizes;
  };
  for (const ir::Node* node : nodes) {
    const std::vector<size_t> sizing = SizeValueInputs(*node);
    for (size_t i = 0; i < node->num_inputs(); ++i) {
      add(node->input(i), std::find(sizing.begin(), sizing.end(), i) != sizing.end());
    }
    for (const ir::Value* v : node->implicit_inputs()) add(v, false);
  }
  t->nodes = std::move(nodes);
  return t;
}

StatusOr<const RunValue*> Find(const Store& store, const std::string& name) {
  auto it = store.find(name);
  if (it == store.end()) return InternalError("value '" + name + "' was not computed");
  return &it->second;
}

// Per boundary value: its kind and sizes, and the bytes of those compiled as constants.
StatusOr<std::vector<int64_t>> KeyOf(const StageTemplate& t, const Store& store) {
  std::vector<int64_t> key;
  for (const Boundary& b : t.boundary) {
    ASSIGN_OR_RETURN(const RunValue* v, Find(store, b.value->name()));
    key.push_back(static_cast<int64_t>(v->kind()));
    if (!v->is_tensor()) continue;
    const Tensor& tensor = v->tensor();
    key.push_back(tensor.is_valid() ? static_cast<int64_t>(tensor.dtype()) : -1);
    key.push_back(static_cast<int64_t>(tensor.rank()));
    key.insert(key.end(), tensor.sizes().begin(), tensor.sizes().end());
    if (!Binds(b, *v)) continue;
    const std::span<const std::byte> bytes = tensor.bytes();
    std::vector<int64_t> words((bytes.size() + 7) / 8, 0);
    if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
    key.insert(key.end(), words.begin(), words.end());
  }
  return key;
}

ir::TensorType TypeOf(const RunValue& v, const ir::TensorType& declared) {
  ir::TensorType type = declared;
  if (v.is_tensor() && v.tensor().is_valid()) {
    std::vector<Dim> dims;
    for (int64_t s : v.tensor().sizes()) dims.push_back(Dim::Known(s));
    type.dtype = v.tensor().dtype();
    type.shape = Shape(std::move(dims));
    type.kind = ir::ValueKind::kTensor;
  } else if (v.is_sequence()) {
    type.kind = ir::ValueKind::kSequence;
    if (v.elem_dtype() != DataType::kUndefined) type.dtype = v.elem_dtype();
  } else if (v.is_none()) {
    type.kind = ir::ValueKind::kOptional;
  }
  return type;
}

// True when a deferred `node` may become static in the next stage: a value that sets its
// sizes is computed in this stage (by the plan or a dynamic step), so the next stage gets
// it as a constant.
bool WaitsForStageValue(const ir::Node& node) {
  for (size_t i : SizeValueInputs(node)) {
    const ir::Value* v = node.input(i);
    if (v != nullptr && v->producer() != nullptr) return true;
  }
  return false;
}

class StageBuilder {
 public:
  StageBuilder(const StageTemplate& t, const Store& store, const GraphRunnerOptions& options,
               const std::set<std::string>& graph_outputs)
      : t_(t), store_(store), options_(options), graph_outputs_(graph_outputs) {}

  StatusOr<std::unique_ptr<CompiledStage>> Build() {
    auto stage = std::make_unique<CompiledStage>();
    ExtractOptions extract;
    extract.outputs = t_.outputs;
    for (const Boundary& b : t_.boundary) {
      ASSIGN_OR_RETURN(const RunValue* v, Find(store_, b.value->name()));
      if (Binds(b, *v)) {
        extract.constants[b.value->name()] = v->tensor().Clone();
        continue;
      }
      extract.input_types[b.value->name()] = TypeOf(*v, b.value->type());
      if (v->is_tensor() && v->tensor().is_valid()) sizes_[b.value->name()] = v->tensor().sizes();
    }
    ASSIGN_OR_RETURN(stage->graph, ExtractGraph(*t_.parent, t_.nodes, extract));
    const ir::Graph& graph = *stage->graph;
    ASSIGN_OR_RETURN(PartialShapes partial,
                     InferShapesPartially(graph, sizes_, ShapeInferenceOptions{}));
    std::unordered_set<const ir::Node*> deferred(partial.deferred.begin(), partial.deferred.end());
    ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
    std::vector<const ir::Node*> static_nodes, next_nodes;
    std::unordered_set<const ir::Value*> available;
    for (const ir::Value* v : graph.inputs()) available.insert(v);
    for (const ir::Node* node : order) {
      if (deferred.count(node)) continue;
      static_nodes.push_back(node);
      for (const ir::Value* out : node->outputs()) available.insert(out);
    }
    for (const ir::Node* node : partial.deferred) {
      bool ready = true;
      auto check = [&](const ir::Value* v) {
        if (v != nullptr && !v->is_initializer() && !available.count(v)) ready = false;
      };
      for (const ir::Value* v : node->inputs()) check(v);
      for (const ir::Value* v : node->implicit_inputs()) check(v);
      if (ready && (AlwaysDynamic(*node) || !WaitsForStageValue(*node))) {
        ASSIGN_OR_RETURN(std::unique_ptr<DynamicStep> step,
                         DynamicStep::Create(*node, graph.onnx_opset(), options_));
        stage->dynamic.push_back(std::move(step));
        for (const ir::Value* out : node->outputs()) available.insert(out);
      } else {
        next_nodes.push_back(node);
      }
    }
    if (!partial.deferred.empty() && stage->dynamic.empty() && static_nodes.empty()) {
      return partial.first_deferral.WithContext("no stage can run it");
    }
    RETURN_IF_ERROR(CompileStaticNodes(graph, static_nodes, next_nodes, *stage));
    if (!next_nodes.empty()) stage->next = MakeTemplate(graph, next_nodes, graph_outputs_);
    return stage;
  }

 private:
  // The plan of the static nodes; its outputs are what later steps and stages read.
  Status CompileStaticNodes(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes,
                            const std::vector<const ir::Node*>& next_nodes, CompiledStage& stage) {
    std::unordered_set<const ir::Node*> later(next_nodes.begin(), next_nodes.end());
    for (const auto& step : stage.dynamic) later.insert(&step->node());
    ExtractOptions extract;
    for (const ir::Node* node : nodes) {
      for (const ir::Value* out : node->outputs()) {
        if (out == nullptr) continue;
        bool needed = graph_outputs_.count(out->name()) > 0;
        for (const ir::Use& use : out->uses()) needed = needed || later.count(use.node) > 0;
        if (needed) extract.outputs.push_back(out->name());
      }
    }
    if (extract.outputs.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> part, ExtractGraph(graph, nodes, extract));
    ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, Compile(*part, sizes_, options_.compile));
    ASSIGN_OR_RETURN(stage.plan, PlanExecutor::Create(std::move(plan)));
    return Status::Ok();
  }

  const StageTemplate& t_;
  const Store& store_;
  const GraphRunnerOptions& options_;
  const std::set<std::string>& graph_outputs_;
  std::map<std::string, std::vector<int64_t>> sizes_;
};

Status RunPlan(CompiledStage& stage, Store& store, bool profile) {
  const Plan& plan = stage.plan->plan();
  std::vector<Tensor> inputs(plan.input_ids.size()), outputs;
  for (size_t i = 0; i < plan.input_ids.size(); ++i) {
    ASSIGN_OR_RETURN(const RunValue* v, Find(store, plan.graph->inputs()[i]->name()));
    inputs[i].ViewOf(v->tensor());
  }
  for (int id : plan.output_ids) {
    const PlanValue& value = plan.values[id];
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(value.dtype, value.physical_sizes()));
    outputs.push_back(std::move(t));
  }
  if (!stage.binding) {
    ASSIGN_OR_RETURN(PlanBinding binding, stage.plan->Bind(inputs, outputs));
    stage.binding = std::move(binding);
  } else {
    RETURN_IF_ERROR(stage.plan->Rebind(*stage.binding, inputs, outputs));
  }
  RETURN_IF_ERROR(stage.plan->Run(*stage.binding, "", profile));
  for (size_t i = 0; i < outputs.size(); ++i) {
    store[plan.graph->outputs()[i]->name()] = RunValue::Of(std::move(outputs[i]));
  }
  return Status::Ok();
}

Status RunDynamicSteps(CompiledStage& stage, Store& store) {
  for (const auto& step : stage.dynamic) {
    const ir::Node& node = step->node();
    std::vector<RunValue> inputs;
    for (const ir::Value* v : node.inputs()) {
      if (v == nullptr) {
        inputs.emplace_back();
      } else if (v->is_initializer()) {
        inputs.push_back(RunValue::Of(v->initializer()));
      } else {
        ASSIGN_OR_RETURN(const RunValue* value, Find(store, v->name()));
        inputs.push_back(*value);
      }
    }
    for (const ir::Value* v : node.implicit_inputs()) {
      if (v->is_initializer()) {
        inputs.push_back(RunValue::Of(v->initializer()));
        continue;
      }
      ASSIGN_OR_RETURN(const RunValue* value, Find(store, v->name()));
      inputs.push_back(*value);
    }
    StatusOr<std::vector<RunValue>> ran = step->Run(inputs);
    if (!ran.ok()) {
      const std::string message = ran.status().message();  // status() is a copy
      if (!node.name().empty() && message.find(node.name()) != std::string::npos) {
        return ran.status();
      }
      return ran.status().WithContext(node.DebugName());
    }
    std::vector<RunValue> outputs = std::move(*ran);
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      if (node.output(i) == nullptr) continue;
      if (i >= outputs.size()) {
        return InternalError(node.DebugName() + ": gave no value for output " + std::to_string(i));
      }
      if (outputs[i].is_tensor() && NumElements(outputs[i].tensor().sizes()) < 0) {
        return InvalidArgumentError(node.DebugName() + ": output has invalid sizes");
      }
      store[node.output(i)->name()] = std::move(outputs[i]);
    }
  }
  return Status::Ok();
}

}  // namespace

GraphRunner::GraphRunner(const ir::Graph& graph, GraphRunnerOptions options)
    : graph_(graph), options_(std::move(options)) {}

GraphRunner::~GraphRunner() = default;

StatusOr<std::vector<RunValue>> GraphRunner::Run(std::span<const RunValue> inputs) {
  std::set<std::string> graph_outputs;
  for (const ir::Value* v : graph_.outputs()) graph_outputs.insert(v->name());
  if (!root_) {
    ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph_.TopologicalOrder());
    root_ = MakeTemplate(graph_, {order.begin(), order.end()}, graph_outputs);
  }
  if (inputs.size() != graph_.inputs().size()) {
    return InvalidArgumentError("expected " + std::to_string(graph_.inputs().size()) +
                                " inputs, got " + std::to_string(inputs.size()));
  }
  Store store;
  for (size_t i = 0; i < inputs.size(); ++i) store[graph_.inputs()[i]->name()] = inputs[i];
  last_stages_.clear();
  for (StageTemplate* t = root_.get(); t != nullptr;) {
    ASSIGN_OR_RETURN(std::vector<int64_t> key, KeyOf(*t, store));
    auto it = t->variants.find(key);
    if (it == t->variants.end()) {
      if (t->variants.size() >= kMaxCachedVariants) t->variants.clear();
      StageBuilder builder(*t, store, options_, graph_outputs);
      ASSIGN_OR_RETURN(std::unique_ptr<CompiledStage> built, builder.Build());
      it = t->variants.emplace(std::move(key), std::move(built)).first;
      ++stages_compiled_;
    }
    CompiledStage& stage = *it->second;
    last_stages_.push_back(&stage);
    if (stage.plan) RETURN_IF_ERROR(RunPlan(stage, store, options_.profile));
    RETURN_IF_ERROR(RunDynamicSteps(stage, store));
    t = stage.next.get();
  }
  std::vector<RunValue> outputs;
  for (const ir::Value* v : graph_.outputs()) {
    if (v->is_initializer()) {
      outputs.push_back(RunValue::Of(v->initializer().Clone()));
      continue;
    }
    ASSIGN_OR_RETURN(const RunValue* value, Find(store, v->name()));
    RunValue out = *value;
    // An output that is a graph input must not alias the caller's buffer.
    if (v->is_graph_input() && out.is_tensor() && out.tensor().is_valid()) {
      out = RunValue::Of(out.tensor().Clone());
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

std::string GraphRunner::LastRunToString() const {
  std::string text;
  for (size_t s = 0; s < last_stages_.size(); ++s) {
    const CompiledStage* stage = last_stages_[s];
    text += "stage " + std::to_string(s) + ":\n";
    if (stage->plan) text += stage->plan->plan().ToString();
    for (const auto& step : stage->dynamic) {
      text += "  dynamic " + step->node().op_type() + " '" + step->node().name() + "'\n";
    }
  }
  return text;
}

}  // namespace qtune::runtime
