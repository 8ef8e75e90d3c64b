// If: runs then_branch or else_branch, each compiled for the sizes of the outer values it
// reads. A condition known at compile time compiles only the branch it selects.
#include <optional>

#include "core/shape.h"
#include "runtime/control/control_flow.h"
#include "runtime/control/control_kernels.h"
#include "runtime/control/subgraph_program.h"

namespace qtune::runtime {
namespace {

struct Branch {
  std::unique_ptr<SubgraphProgram> program;
  OuterBinding outer;
  std::vector<ValueInfo> outputs;
};

struct IfAnalysis {
  std::optional<bool> constant_cond;
  Branch branches[2];  // [0] else_branch, [1] then_branch; only the selected one when constant
  std::vector<ValueInfo> outputs;
};

StatusOr<std::optional<bool>> ConstantCondition(const ir::Node& node, const ValueInfo* cond) {
  if (cond == nullptr) return InvalidArgumentError(node.DebugName() + " has no condition input");
  if (cond->dtype != DataType::kBool || NumElements(cond->sizes) != 1) {
    return InvalidArgumentError(node.DebugName() + ": the condition must be one bool, not " +
                                std::string(DataTypeName(cond->dtype)) + " [" +
                                SizesToString(cond->sizes) + "]");
  }
  if (!cond->has_constant()) return std::optional<bool>();
  return std::optional<bool>(cond->constant.data<bool>()[0]);
}

StatusOr<IfAnalysis> AnalyzeIf(const BodyRequest& request, const ValueInfo* cond) {
  const ir::Node& node = request.node;
  IfAnalysis a;
  ASSIGN_OR_RETURN(a.constant_cond, ConstantCondition(node, cond));
  for (int which : {1, 0}) {
    if (a.constant_cond.has_value() && *a.constant_cond != (which == 1)) continue;
    Branch& b = a.branches[which];
    ASSIGN_OR_RETURN(b.program, CreateBody(request, which ? "then_branch" : "else_branch", {}));
    ASSIGN_OR_RETURN(b.outer, BindOuterInputs(*b.program, request));
    ASSIGN_OR_RETURN(b.outputs, b.program->InferOutputs(b.outer.sizes));
    if (b.outputs.size() != node.num_outputs()) {
      return InvalidArgumentError(b.program->what() + " has " + std::to_string(b.outputs.size()) +
                                  " outputs, the node " + std::to_string(node.num_outputs()));
    }
  }
  if (a.constant_cond.has_value()) {
    a.outputs = a.branches[*a.constant_cond ? 1 : 0].outputs;
    return a;
  }
  const auto& then_out = a.branches[1].outputs;
  const auto& else_out = a.branches[0].outputs;
  for (size_t i = 0; i < then_out.size(); ++i) {
    if (then_out[i].dtype != else_out[i].dtype) {
      return InvalidArgumentError(node.DebugName() + ": output " + std::to_string(i) + " is " +
                                  std::string(DataTypeName(then_out[i].dtype)) +
                                  " in then_branch but " +
                                  std::string(DataTypeName(else_out[i].dtype)) + " in else_branch");
    }
    if (then_out[i].sizes != else_out[i].sizes) {
      return UnimplementedError(
          node.DebugName() + ": output " + std::to_string(i) + " has sizes [" +
          SizesToString(then_out[i].sizes) + "] in then_branch but [" +
          SizesToString(else_out[i].sizes) +
          "] in else_branch, and the condition is computed at run time; qtune compiles for "
          "fixed sizes, so the branches must agree (or the condition must be a constant)");
    }
    a.outputs.push_back(MakeInfo(then_out[i].dtype, then_out[i].sizes));
  }
  return a;
}

class IfKernel final : public Kernel {
 public:
  IfKernel(IfAnalysis analysis, size_t num_node_inputs, std::string what)
      : analysis_(std::move(analysis)), num_node_inputs_(num_node_inputs), what_(std::move(what)) {}

  Status Prepare() {
    for (Branch& b : analysis_.branches) {
      if (b.program == nullptr) continue;
      ASSIGN_OR_RETURN(plans_[&b - analysis_.branches], b.program->PlanFor(b.outer.sizes));
    }
    return Status::Ok();
  }

  std::string Describe() const override {
    std::string d = "control:If";
    if (analysis_.constant_cond) d += *analysis_.constant_cond ? " (then only)" : " (else only)";
    for (int which : {1, 0}) {
      if (plans_[which] != nullptr) {
        d += std::string(which ? " then:" : " else:") +
             std::to_string(plans_[which]->plan().steps.size()) + " steps";
      }
    }
    return d;
  }

  std::vector<const Plan*> NestedPlans() const override {
    std::vector<const Plan*> plans;
    for (int which : {1, 0}) {
      if (plans_[which] != nullptr) plans.push_back(&plans_[which]->plan());
    }
    return plans;
  }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const int which = inputs[0].data<bool>()[0] ? 1 : 0;
    PlanExecutor* plan = plans_[which];
    if (plan == nullptr) {
      return InternalError(what_ + ": the condition selects a branch that was not compiled");
    }
    const Branch& b = analysis_.branches[which];
    // The outer plan usually hands over the same buffers every run (arena values): the
    // binding of the last run is reused then. Other buffers (a model output the caller
    // receives is new each run) are re-pointed, so a warm run allocates nothing.
    addresses_.clear();
    for (size_t k : b.outer.implicit_index) {
      addresses_.push_back(inputs[num_node_inputs_ + k].raw_data());
    }
    for (const Tensor& out : outputs) addresses_.push_back(out.raw_data());
    Bound& bound = bound_[which];
    if (!bound.binding.has_value() || bound.addresses != addresses_) {
      body_inputs_.clear();
      for (size_t k : b.outer.implicit_index) body_inputs_.push_back(inputs[num_node_inputs_ + k]);
      const std::span<const Tensor> body_outputs(outputs.data(), outputs.size());
      if (bound.binding.has_value()) {
        RETURN_IF_ERROR(plan->Rebind(*bound.binding, body_inputs_, body_outputs));
      } else {
        ASSIGN_OR_RETURN(PlanBinding binding, plan->Bind(body_inputs_, body_outputs));
        bound.binding = std::move(binding);
      }
      bound.addresses = addresses_;
    }
    return plan->Run(*bound.binding, what_ + (which ? " then_branch" : " else_branch"));
  }

 private:
  IfAnalysis analysis_;
  size_t num_node_inputs_;
  std::string what_;
  PlanExecutor* plans_[2] = {nullptr, nullptr};
  std::vector<Tensor> body_inputs_;
  struct Bound {
    std::optional<PlanBinding> binding;
    std::vector<const void*> addresses;  // of the tensors `binding` was made for
  };
  Bound bound_[2];
  std::vector<const void*> addresses_;
};

}  // namespace

StatusOr<std::vector<ValueInfo>> InferIfShapes(const ShapeArgs& args) {
  BodyRequest request{args.node, args.opset, args.implicit_inputs, ShapeOnlyBodyOptions()};
  ASSIGN_OR_RETURN(IfAnalysis a, AnalyzeIf(request, args.has_input(0) ? &args.input(0) : nullptr));
  return a.outputs;
}

StatusOr<std::optional<KernelChoice>> CreateIfKernel(const KernelRequest& request,
                                                     const CompileOptions& options) {
  const ir::Node& node = request.node;
  std::span<const ValueInfo* const> all(request.inputs);
  BodyRequest body{node, request.opset, all.subspan(node.num_inputs()), KernelBodyOptions(options)};
  ASSIGN_OR_RETURN(IfAnalysis a, AnalyzeIf(body, request.inputs.empty() ? nullptr : all[0]));
  auto kernel = std::make_unique<IfKernel>(std::move(a), node.num_inputs(), node.DebugName());
  RETURN_IF_ERROR(kernel->Prepare());
  return PlainLayoutChoice(std::move(kernel), request);
}

}  // namespace qtune::runtime
