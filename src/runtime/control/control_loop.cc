// Loop: the body runs while `iteration < M` and the condition holds. Body inputs are the
// iteration number, the condition and the N loop-carried values (then outer values);
// body outputs the condition, the N carried values and K scan outputs, which the kernel
// stacks along a new first dimension.
#include <cstring>
#include <limits>

#include "core/shape.h"
#include "runtime/control/control_flow.h"
#include "runtime/control/control_kernels.h"
#include "runtime/control/recurrence.h"

namespace qtune::runtime {
namespace {

struct LoopAnalysis {
  std::unique_ptr<SubgraphProgram> body;
  OuterBinding outer;
  RecurrenceInputs inputs;
  RecurrenceShapes shapes;
  std::optional<int64_t> static_trip;
  std::vector<ValueInfo> outputs;
};

StatusOr<std::optional<int64_t>> ConstantScalar(const ir::Node& node, const ValueInfo* info,
                                                DataType dtype, const char* what) {
  if (info == nullptr) return std::optional<int64_t>();
  if (info->dtype != dtype || NumElements(info->sizes) != 1) {
    return InvalidArgumentError(node.DebugName() + ": " + what + " must be one " +
                                std::string(DataTypeName(dtype)) + ", not " +
                                std::string(DataTypeName(info->dtype)) + " [" +
                                SizesToString(info->sizes) + "]");
  }
  if (!info->has_constant()) return std::optional<int64_t>();
  if (dtype == DataType::kBool) return std::optional<int64_t>(info->constant.data<bool>()[0]);
  return std::optional<int64_t>(info->constant.data<int64_t>()[0]);
}

// The body cannot end the loop early: its condition output is the constant true, or the
// condition input passed straight through (Identity nodes aside).
bool BodyAlwaysContinues(const SubgraphProgram& body, const std::vector<ValueInfo>& outs) {
  const ValueInfo& cond = outs[0];
  if (cond.has_constant() && cond.dtype == DataType::kBool && NumElements(cond.sizes) == 1) {
    return cond.constant.data<bool>()[0];
  }
  const ir::Value* v = body.graph().outputs()[0];
  while (v->producer() != nullptr && v->producer()->op_type() == "Identity" &&
         v->producer()->num_inputs() == 1) {
    v = v->producer()->input(0);
  }
  return v == body.graph().inputs()[1];
}

StatusOr<LoopAnalysis> AnalyzeLoop(const BodyRequest& request,
                                   std::span<const ValueInfo* const> node_inputs) {
  const ir::Node& node = request.node;
  if (node.num_inputs() < 2) {
    return InvalidArgumentError(node.DebugName() +
                                " needs the inputs M and cond (either may "
                                "be omitted with an empty name)");
  }
  const ValueInfo* m_info = node_inputs[0];
  const ValueInfo* cond_info = node_inputs[1];
  ASSIGN_OR_RETURN(std::optional<int64_t> m, ConstantScalar(node, m_info, DataType::kInt64, "M"));
  ASSIGN_OR_RETURN(std::optional<int64_t> cond,
                   ConstantScalar(node, cond_info, DataType::kBool, "cond"));
  LoopAnalysis a;
  std::vector<DataType> formal{DataType::kInt64, DataType::kBool};
  a.inputs.pre.push_back(MakeInfo(DataType::kInt64, {}));
  a.inputs.carried.push_back(MakeInfo(DataType::kBool, {}));
  for (size_t i = 2; i < node.num_inputs(); ++i) {
    if (node_inputs[i] == nullptr) {
      return InvalidArgumentError(node.DebugName() + ": loop-carried input " +
                                  std::to_string(i - 2) + " is omitted");
    }
    formal.push_back(node_inputs[i]->dtype);
    a.inputs.carried.push_back(MakeInfo(node_inputs[i]->dtype, node_inputs[i]->sizes));
  }
  ASSIGN_OR_RETURN(a.body, CreateBody(request, "body", formal));
  ASSIGN_OR_RETURN(a.outer, BindOuterInputs(*a.body, request));
  a.inputs.outer = a.outer.sizes;
  const bool has_m = m_info != nullptr;
  const bool has_cond = cond_info != nullptr;
  StaticTripFn static_trip =
      [&](const std::vector<ValueInfo>& outs) -> StatusOr<std::optional<int64_t>> {
    if (has_cond && cond.has_value() && *cond == 0) return std::optional<int64_t>(0);
    const bool starts = !has_cond || cond.has_value();
    if (has_m && m.has_value() && starts && BodyAlwaysContinues(*a.body, outs)) {
      return std::optional<int64_t>(std::max<int64_t>(*m, 0));
    }
    return std::optional<int64_t>();
  };
  ASSIGN_OR_RETURN(a.shapes, InferRecurrence(node, *a.body, a.inputs, static_trip));
  ASSIGN_OR_RETURN(a.static_trip, static_trip(a.shapes.first_outputs));
  const size_t num_carried = node.num_inputs() - 2;
  const size_t num_scan = a.shapes.per_iteration.size();
  if (node.num_outputs() != num_carried + num_scan) {
    return InvalidArgumentError(node.DebugName() + " has " + std::to_string(node.num_outputs()) +
                                " outputs; its body gives " + std::to_string(num_carried) +
                                " loop-carried values and " + std::to_string(num_scan) +
                                " scan outputs");
  }
  for (size_t c = 0; c < num_carried; ++c) {
    a.outputs.push_back(MakeInfo(a.inputs.carried[c + 1].dtype, a.shapes.final_carried()[c + 1]));
  }
  if (num_scan > 0 && !a.static_trip.has_value()) {
    return UnimplementedError(node.DebugName() +
                              ": its scan outputs are stacked over the iterations, and the "
                              "number of iterations is computed at run time (M is not a "
                              "constant, or the body's condition may end the loop early); "
                              "qtune compiles for fixed sizes, so make M a constant");
  }
  for (const ValueInfo& v : a.shapes.per_iteration) {
    std::vector<int64_t> sizes{a.static_trip.value_or(0)};
    sizes.insert(sizes.end(), v.sizes.begin(), v.sizes.end());
    a.outputs.push_back(MakeInfo(v.dtype, std::move(sizes)));
  }
  return a;
}

class LoopKernel final : public Kernel {
 public:
  LoopKernel(LoopAnalysis analysis, std::unique_ptr<RecurrenceRunner> runner, size_t num_inputs,
             std::string what)
      : a_(std::move(analysis)),
        runner_(std::move(runner)),
        num_inputs_(num_inputs),
        what_(std::move(what)) {}

  Status Init() {
    ASSIGN_OR_RETURN(cond_initial_, Tensor::Allocate(DataType::kBool, {}));
    return Status::Ok();
  }

  std::string Describe() const override {
    std::string trip = a_.static_trip ? std::to_string(*a_.static_trip) : "run-time";
    return "control:Loop (iterations: " + trip + ", body plans: " +
           std::to_string(a_.shapes.stable() ? 1 : a_.shapes.carried.size() - 1) + ")";
  }

  std::vector<const Plan*> NestedPlans() const override { return runner_->plans(); }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const int64_t m =
        inputs[0].is_valid() ? inputs[0].data<int64_t>()[0] : std::numeric_limits<int64_t>::max();
    cond_initial_.data<bool>()[0] = inputs[1].is_valid() ? inputs[1].data<bool>()[0] : true;
    initial_.clear();
    initial_.push_back(cond_initial_);
    initial_.insert(initial_.end(), inputs.begin() + 2, inputs.begin() + num_inputs_);
    outer_.clear();
    for (size_t k : a_.outer.implicit_index) outer_.push_back(inputs[num_inputs_ + k]);
    RETURN_IF_ERROR(runner_->Start(initial_, outer_));
    const size_t num_carried = num_inputs_ - 2;
    int64_t t = 0;
    for (; t < m && *static_cast<const bool*>(runner_->carried_data(0)); ++t) {
      runner_->pre(0).data<int64_t>()[0] = t;
      RETURN_IF_ERROR(runner_->RunIteration(t));
      for (size_t k = 0; k < a_.shapes.per_iteration.size(); ++k) {
        const Tensor& slice = runner_->per_iteration_output(k);
        Tensor& out = outputs[num_carried + k];
        if (static_cast<size_t>(t + 1) * slice.byte_size() > out.byte_size()) {
          return InternalError(what_ + ": more iterations than its scan outputs were sized for");
        }
        if (slice.byte_size() == 0) continue;
        std::memcpy(static_cast<std::byte*>(out.raw_data()) + t * slice.byte_size(),
                    slice.raw_data(), slice.byte_size());
      }
    }
    if (a_.static_trip.has_value() && t != *a_.static_trip) {
      return FailedPreconditionError(what_ + " ran " + std::to_string(t) +
                                     " iterations, but was compiled for " +
                                     std::to_string(*a_.static_trip));
    }
    for (size_t c = 0; c < num_carried; ++c) {
      const size_t bytes = runner_->carried_bytes(c + 1);
      if (bytes != outputs[c].byte_size()) {
        return InternalError(what_ + ": final loop-carried value " + std::to_string(c) + " has " +
                             std::to_string(bytes) + " bytes, its output " +
                             std::to_string(outputs[c].byte_size()));
      }
      if (bytes > 0) std::memcpy(outputs[c].raw_data(), runner_->carried_data(c + 1), bytes);
    }
    return Status::Ok();
  }

 private:
  LoopAnalysis a_;
  std::unique_ptr<RecurrenceRunner> runner_;
  size_t num_inputs_;
  std::string what_;
  Tensor cond_initial_;
  std::vector<Tensor> initial_, outer_;
};

}  // namespace

StatusOr<std::vector<ValueInfo>> InferLoopShapes(const ShapeArgs& args) {
  BodyRequest request{args.node, args.opset, args.implicit_inputs, ShapeOnlyBodyOptions()};
  ASSIGN_OR_RETURN(LoopAnalysis a, AnalyzeLoop(request, args.inputs));
  return a.outputs;
}

StatusOr<std::optional<KernelChoice>> CreateLoopKernel(const KernelRequest& request,
                                                       const CompileOptions& options) {
  const ir::Node& node = request.node;
  std::span<const ValueInfo* const> all(request.inputs);
  BodyRequest body{node, request.opset, all.subspan(node.num_inputs()), KernelBodyOptions(options)};
  ASSIGN_OR_RETURN(LoopAnalysis a, AnalyzeLoop(body, all.first(node.num_inputs())));
  ASSIGN_OR_RETURN(std::unique_ptr<RecurrenceRunner> runner,
                   RecurrenceRunner::Create(*a.body, a.inputs, a.shapes));
  auto kernel = std::make_unique<LoopKernel>(std::move(a), std::move(runner), node.num_inputs(),
                                             node.DebugName());
  RETURN_IF_ERROR(kernel->Init());
  return PlainLayoutChoice(std::move(kernel), request);
}

}  // namespace qtune::runtime
