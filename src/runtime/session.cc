#include "runtime/session.h"

#include <chrono>

#include "core/shape.h"
#include "passes/pipeline.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/plan/memory_planner.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {

StatusOr<std::unique_ptr<Session>> Session::Create(const ir::Graph& graph,
                                                   const SessionOptions& options) {
  std::unique_ptr<ir::Graph> copy = graph.Clone();
  if (options.optimize) {
    passes::PassOptions pass_options;
    pass_options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs,
                                int64_t opset) { return EvaluateNode(node, inputs, opset); };
    ASSIGN_OR_RETURN(auto report, passes::RunPipeline(*copy, pass_options));
    (void)report;
  }
  return std::unique_ptr<Session>(new Session(std::move(copy), options));
}

namespace {

// True when a floating-point input holds NaN or +-inf (x - x is NaN exactly then); no
// early exit, so the loop vectorizes.
bool AnyNonFinite(const Tensor& t) {
  bool bad = false;
  if (t.dtype() == DataType::kFloat32) {
    for (float v : t.span<float>()) bad |= !(v - v == 0.0f);
  } else if (t.dtype() == DataType::kFloat64) {
    for (double v : t.span<double>()) bad |= !(v - v == 0.0);
  }
  return bad;
}

}  // namespace

StatusOr<Plan*> Session::PlanFor(const std::map<std::string, std::vector<int64_t>>& sizes,
                                 bool reference) {
  auto it = plans_.find({sizes, reference});
  if (it != plans_.end()) return it->second.get();
  CompileOptions compile_options{options_.threads, options_.use_onednn && !reference,
                                 options_.optimize, options_.bf16};
  ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, Compile(*graph_, sizes, compile_options));
  Plan* raw = plan.get();
  ASSIGN_OR_RETURN(arenas_[raw], AllocateArena(plan->arena_bytes, "these input sizes"));
  plans_[{sizes, reference}] = std::move(plan);
  return raw;
}

StatusOr<const Plan*> Session::Prepare(const std::map<std::string, std::vector<int64_t>>& sizes) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Plan * plan, PlanFor(sizes));
  return plan;
}

StatusOr<NamedTensors> Session::Run(const NamedTensors& inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, std::vector<int64_t>> sizes;
  std::map<std::string, const Tensor*> by_name;
  for (const auto& [name, tensor] : inputs) {
    if (!by_name.emplace(name, &tensor).second) {
      return InvalidArgumentError("input '" + name + "' is given twice");
    }
  }
  std::string expected;
  for (const ir::Value* input : graph_->inputs()) expected += " '" + input->name() + "'";
  for (const auto& [name, tensor] : by_name) {
    const ir::Value* v = graph_->FindValue(name);
    if (v == nullptr || !v->is_graph_input()) {
      return InvalidArgumentError("the model has no input named '" + name + "'; its inputs are" +
                                  expected);
    }
  }
  for (const ir::Value* input : graph_->inputs()) {
    auto it = by_name.find(input->name());
    if (it == by_name.end()) {
      return InvalidArgumentError("missing input '" + input->name() + "'; the model's inputs are" +
                                  expected);
    }
    const Tensor& t = *it->second;
    if (t.dtype() != input->dtype()) {
      return InvalidArgumentError("input '" + input->name() + "' is " +
                                  std::string(DataTypeName(t.dtype())) + " but the model expects " +
                                  std::string(DataTypeName(input->dtype())));
    }
    const auto& shape = input->type().shape;
    if (shape) {
      if (shape->rank() != t.rank()) {
        return InvalidArgumentError("input '" + input->name() + "' has rank " +
                                    std::to_string(t.rank()) + " but the model expects " +
                                    shape->ToString());
      }
      for (size_t d = 0; d < t.rank(); ++d) {
        if (shape->dim(d).is_known() && shape->dim(d).value != t.size(d)) {
          return InvalidArgumentError("input '" + input->name() + "' has sizes [" +
                                      SizesToString(t.sizes()) + "] but the model expects " +
                                      shape->ToString());
        }
      }
    }
    sizes[input->name()] = t.sizes();
  }
  bool non_finite = false;
  if (options_.use_onednn) {
    for (const auto& [name, tensor] : by_name) non_finite |= AnyNonFinite(*tensor);
  }
  ASSIGN_OR_RETURN(Plan * plan, PlanFor(sizes, non_finite));

  std::vector<Tensor> slots(plan->values.size());
  std::byte* arena = arenas_.at(plan).get();
  for (size_t i = 0; i < plan->input_ids.size(); ++i) {
    slots[plan->input_ids[i]] = *by_name.at(graph_->inputs()[i]->name());
  }
  for (size_t id = 0; id < plan->values.size(); ++id) {
    PlanValue& v = plan->values[id];
    switch (v.kind) {
      case PlanValue::Kind::kConstant:
        slots[id] = v.constant;
        break;
      case PlanValue::Kind::kIntermediate:
        slots[id] = Tensor::Borrow(v.dtype, v.physical_sizes(), arena + v.arena_offset);
        break;
      case PlanValue::Kind::kOutput: {
        ASSIGN_OR_RETURN(slots[id], Tensor::Allocate(v.dtype, v.physical_sizes()));
        break;
      }
      case PlanValue::Kind::kInput:
      case PlanValue::Kind::kAlias:
        break;
    }
  }
  for (size_t id = 0; id < plan->values.size(); ++id) {
    const PlanValue& v = plan->values[id];
    if (v.kind != PlanValue::Kind::kAlias) continue;
    slots[id] = Tensor::Borrow(v.dtype, v.physical_sizes(), slots[v.alias_of].raw_data());
  }
  if (options_.use_onednn && !non_finite) onednn::SetThreads(plan->threads);
  std::vector<Tensor> step_inputs, step_outputs;
  for (PlanStep& step : plan->steps) {
    step_inputs.clear();
    step_outputs.clear();
    for (int id : step.inputs) step_inputs.push_back(id < 0 ? Tensor() : slots[id]);
    for (int id : step.outputs) step_outputs.push_back(id < 0 ? Tensor() : slots[id]);
    auto start = options_.profile ? std::chrono::steady_clock::now()
                                  : std::chrono::steady_clock::time_point();
    Status s = step.kernel->Run(step_inputs, step_outputs);
    if (options_.profile) {
      step.profile_ms +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      step.profile_runs += 1;
    }
    if (!s.ok()) return s.WithContext(step.op_type + " '" + step.node_name + "'");
  }
  NamedTensors outputs;
  for (size_t i = 0; i < plan->output_ids.size(); ++i) {
    const PlanValue& v = plan->values[plan->output_ids[i]];
    Tensor t = slots[plan->output_ids[i]];
    if (v.kind != PlanValue::Kind::kOutput) t = t.Clone();
    outputs.emplace_back(graph_->outputs()[i]->name(), std::move(t));
  }
  return outputs;
}

}  // namespace qtune::runtime
