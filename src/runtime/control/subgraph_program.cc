#include "runtime/control/subgraph_program.h"

#include <cstring>

#include "core/shape.h"
#include "ir/builder.h"
#include "passes/pipeline.h"
#include "runtime/plan/memory_planner.h"
#include "runtime/reference/registry.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::runtime {
StatusOr<std::unique_ptr<SubgraphProgram>> SubgraphProgram::Create(
    const std::string& bytes, const ir::SubgraphContext& context, const SubgraphOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, ir::ParseSubgraph(bytes, context));
  const size_t num_formal = context.formal_input_types.size();
  std::vector<std::string> inputs_before;
  for (const ir::Value* v : graph->inputs()) inputs_before.push_back(v->name());
  if (options.optimize) {
    passes::PassOptions pass_options;
    pass_options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs,
                                int64_t opset) { return EvaluateNode(node, inputs, opset); };
    auto report = passes::RunPipeline(*graph, pass_options);
    if (!report.ok()) return report.status().WithContext(context.what);
  }
  std::vector<std::string> inputs_after;
  for (const ir::Value* v : graph->inputs()) inputs_after.push_back(v->name());
  if (inputs_after != inputs_before) {
    return InternalError(context.what + ": the pass pipeline changed the body's inputs");
  }
  auto program = std::unique_ptr<SubgraphProgram>(new SubgraphProgram());
  program->graph_ = std::move(graph);
  program->num_formal_ = num_formal;
  program->options_ = options;
  program->what_ = context.what;
  return program;
}

std::vector<std::string> SubgraphProgram::outer_input_names() const {
  std::vector<std::string> names;
  for (size_t i = num_formal_; i < graph_->inputs().size(); ++i) {
    names.push_back(graph_->inputs()[i]->name());
  }
  return names;
}

std::map<std::string, std::vector<int64_t>> SubgraphProgram::SizesByName(
    const std::vector<std::vector<int64_t>>& input_sizes) const {
  std::map<std::string, std::vector<int64_t>> sizes;
  for (size_t i = 0; i < graph_->inputs().size() && i < input_sizes.size(); ++i) {
    sizes[graph_->inputs()[i]->name()] = input_sizes[i];
  }
  return sizes;
}

StatusOr<std::vector<ValueInfo>> SubgraphProgram::InferOutputs(
    const std::vector<std::vector<int64_t>>& input_sizes) const {
  auto infos = InferShapes(*graph_, SizesByName(input_sizes), ShapeInferenceOptions{});
  if (!infos.ok()) return infos.status().WithContext(what_);
  std::vector<ValueInfo> outputs;
  for (const ir::Value* v : graph_->outputs()) outputs.push_back(infos->at(v));
  return outputs;
}

StatusOr<PlanExecutor*> SubgraphProgram::PlanFor(
    const std::vector<std::vector<int64_t>>& input_sizes) {
  auto it = plans_.find(input_sizes);
  if (it != plans_.end()) return it->second.get();
  auto plan = Compile(*graph_, SizesByName(input_sizes), options_.compile);
  if (!plan.ok()) return plan.status().WithContext(what_);
  ASSIGN_OR_RETURN(std::unique_ptr<PlanExecutor> body,
                   PlanExecutor::Create(std::move(plan).value()));
  PlanExecutor* raw = body.get();
  plans_[input_sizes] = std::move(body);
  return raw;
}

StatusOr<std::unique_ptr<SubgraphProgram>> CreateBody(const BodyRequest& request,
                                                      const std::string& attribute,
                                                      std::vector<DataType> formal_input_types) {
  const ir::Node& node = request.node;
  const ir::Attribute* a = node.FindAttribute(attribute);
  if (a == nullptr || a->type != ir::AttributeType::kGraph || a->graphs.size() != 1) {
    return InvalidArgumentError(node.DebugName() + " has no graph attribute '" + attribute + "'");
  }
  ir::ModelInfo model;
  model.opset_imports[""] = request.opset;
  model.ir_version = ir::IrVersionForOpset(request.opset);
  ir::SubgraphContext context;
  context.model = &model;
  context.formal_input_types = std::move(formal_input_types);
  context.what = attribute + " of " + node.DebugName();
  for (size_t k = 0; k < node.implicit_inputs().size(); ++k) {
    const ir::Value* v = node.implicit_inputs()[k];
    const ValueInfo* info =
        k < request.implicit_inputs.size() ? request.implicit_inputs[k] : nullptr;
    if (info == nullptr) {
      return InternalError(node.DebugName() + ": no shape information for outer value '" +
                           v->name() + "'");
    }
    context.outer[v->name()] = ir::OuterValue{info->dtype, info->constant};
  }
  return SubgraphProgram::Create(a->graphs[0], context, request.options);
}

StatusOr<OuterBinding> BindOuterInputs(const SubgraphProgram& body, const BodyRequest& request) {
  OuterBinding binding;
  const auto& implicit = request.node.implicit_inputs();
  for (const std::string& name : body.outer_input_names()) {
    size_t k = 0;
    while (k < implicit.size() && implicit[k]->name() != name) ++k;
    if (k == implicit.size()) {
      return InternalError(body.what() + " reads '" + name + "', not an implicit input");
    }
    binding.sizes.push_back(request.implicit_inputs[k]->sizes);
    binding.implicit_index.push_back(k);
  }
  return binding;
}

}  // namespace qtune::runtime
