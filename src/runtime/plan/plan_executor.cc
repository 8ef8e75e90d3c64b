#include "runtime/plan/plan_executor.h"

#include <omp.h>

#include <chrono>
#include <cstring>

#include "core/shape.h"
#include "runtime/plan/memory_planner.h"
#include "runtime/plan/non_finite.h"

namespace qtune::runtime {
namespace {

Status CheckBound(const PlanValue& v, const Tensor& t, const char* role) {
  if (t.dtype() == v.dtype && t.sizes() == v.physical_sizes()) return Status::Ok();
  return InternalError(std::string("plan ") + role + " '" + v.name + "': bound a " +
                       std::string(DataTypeName(t.dtype())) + " [" + SizesToString(t.sizes()) +
                       "] tensor to a plan value of " + std::string(DataTypeName(v.dtype)) + " [" +
                       SizesToString(v.sizes) + "]");
}

// `bound` was checked against `v` by Bind; `t` must have its type and sizes.
Status CheckRebound(const PlanValue& v, const Tensor& bound, const Tensor& t, const char* role) {
  if (t.dtype() == bound.dtype() && t.sizes() == bound.sizes()) return Status::Ok();
  return CheckBound(v, t, role);
}

}  // namespace

StatusOr<std::unique_ptr<PlanExecutor>> PlanExecutor::Create(std::unique_ptr<Plan> plan) {
  ASSIGN_OR_RETURN(std::shared_ptr<std::byte[]> arena,
                   AllocateArena(plan->arena_bytes, "these input sizes"));
  return std::unique_ptr<PlanExecutor>(new PlanExecutor(std::move(plan), std::move(arena)));
}

StatusOr<PlanBinding> PlanExecutor::Bind(std::span<const Tensor> inputs,
                                         std::span<const Tensor> outputs) {
  const Plan& p = *plan_;
  if (inputs.size() != p.input_ids.size() || outputs.size() != p.output_ids.size()) {
    return InternalError("plan binding: " + std::to_string(inputs.size()) + " inputs and " +
                         std::to_string(outputs.size()) + " outputs for a plan of " +
                         std::to_string(p.input_ids.size()) + " and " +
                         std::to_string(p.output_ids.size()));
  }
  PlanBinding b;
  b.slots.resize(p.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(CheckBound(p.values[p.input_ids[i]], inputs[i], "input"));
    b.slots[p.input_ids[i]].ViewOf(inputs[i]);
  }
  for (size_t id = 0; id < p.values.size(); ++id) {
    const PlanValue& v = p.values[id];
    if (v.kind == PlanValue::Kind::kConstant) b.slots[id] = v.constant;
    if (v.kind == PlanValue::Kind::kIntermediate) {
      b.slots[id] = Tensor::Borrow(v.dtype, v.physical_sizes(), arena_.get() + v.arena_offset);
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int id = p.output_ids[i];
    const PlanValue& v = p.values[id];
    RETURN_IF_ERROR(CheckBound(v, outputs[i], "output"));
    if (v.kind == PlanValue::Kind::kOutput && !b.slots[id].is_valid()) {
      b.slots[id].ViewOf(outputs[i]);  // the plan writes this output straight into the buffer
      b.output_copy.push_back(-1);
    } else {
      b.output_copy.push_back(static_cast<int>(b.copies.size()));
      b.copies.emplace_back(id, Tensor());
      b.copies.back().second.ViewOf(outputs[i]);
    }
  }
  // An output seen through an alias (another layout, same bytes) leaves its source unbound.
  for (size_t id = 0; id < p.values.size(); ++id) {
    const PlanValue& v = p.values[id];
    if (v.kind == PlanValue::Kind::kOutput && !b.slots[id].is_valid()) {
      ASSIGN_OR_RETURN(b.slots[id], Tensor::Allocate(v.dtype, v.physical_sizes()));
    }
  }
  for (size_t id = 0; id < p.values.size(); ++id) {
    const PlanValue& v = p.values[id];
    if (v.kind != PlanValue::Kind::kAlias) continue;
    b.slots[id] = Tensor::Borrow(v.dtype, v.physical_sizes(), b.slots[v.alias_of].raw_data());
  }
  b.step_inputs.resize(p.steps.size());
  b.step_outputs.resize(p.steps.size());
  for (size_t s = 0; s < p.steps.size(); ++s) {
    for (int id : p.steps[s].inputs) b.step_inputs[s].push_back(id < 0 ? Tensor() : b.slots[id]);
    for (int id : p.steps[s].outputs) {
      b.step_outputs[s].push_back(id < 0 ? Tensor() : b.slots[id]);
    }
  }
  return b;
}

Status PlanExecutor::Rebind(PlanBinding& b, std::span<const Tensor> inputs,
                            std::span<const Tensor> outputs) {
  const Plan& p = *plan_;
  if (inputs.size() != p.input_ids.size() || outputs.size() != b.output_copy.size()) {
    return InternalError("plan rebinding: another number of inputs or outputs than bound");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& slot = b.slots[p.input_ids[i]];
    RETURN_IF_ERROR(CheckRebound(p.values[p.input_ids[i]], slot, inputs[i], "input"));
    slot.ViewOf(inputs[i]);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int id = p.output_ids[i];
    Tensor& bound = b.output_copy[i] < 0 ? b.slots[id] : b.copies[b.output_copy[i]].second;
    RETURN_IF_ERROR(CheckRebound(p.values[id], bound, outputs[i], "output"));
    bound.ViewOf(outputs[i]);
  }
  for (size_t id = 0; id < p.values.size(); ++id) {
    const PlanValue& v = p.values[id];
    if (v.kind == PlanValue::Kind::kAlias) b.slots[id].RebindData(b.slots[v.alias_of].raw_data());
  }
  // Only the arguments whose slot moved change (inputs, outputs and their aliases).
  auto follow = [&](const std::vector<int>& ids, std::vector<Tensor>& args) {
    for (size_t k = 0; k < ids.size(); ++k) {
      if (ids[k] >= 0 && args[k].raw_data() != b.slots[ids[k]].raw_data()) {
        args[k].RebindData(b.slots[ids[k]].raw_data());
      }
    }
  };
  for (size_t s = 0; s < p.steps.size(); ++s) {
    follow(p.steps[s].inputs, b.step_inputs[s]);
    follow(p.steps[s].outputs, b.step_outputs[s]);
  }
  return Status::Ok();
}

namespace {

// Set while a profiled plan runs on this thread, so that the plans its control-flow
// kernels run inside themselves (Kernel::NestedPlans) are profiled too.
thread_local bool t_profiling = false;

// Sets OpenMP's thread count for each step that has its own (PlanStep::threads) and puts
// the caller's back when the steps are done, on every path.
class StepThreadCount {
 public:
  StepThreadCount() : outer_(omp_get_max_threads()), current_(outer_) {}
  ~StepThreadCount() { Set(outer_); }
  void For(const PlanStep& step) { Set(step.threads > 0 ? step.threads : outer_); }

 private:
  void Set(int threads) {
    if (threads != current_) omp_set_num_threads(threads);
    current_ = threads;
  }
  int outer_, current_;
};

}  // namespace

Status PlanExecutor::Run(PlanBinding& binding, const std::string& what, bool profile) {
  profile = profile || t_profiling;
  const bool outer_profiling = t_profiling;
  t_profiling = profile;
  Status status = RunSteps(binding, what, profile);
  t_profiling = outer_profiling;
  return status;
}

Status PlanExecutor::RunSteps(PlanBinding& binding, const std::string& what, bool profile) {
  StepThreadCount thread_count;
  for (size_t s = 0; s < plan_->steps.size(); ++s) {
    PlanStep& step = plan_->steps[s];
    thread_count.For(step);
    const auto start =
        profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    Status status = step.kernel->Run(binding.step_inputs[s], binding.step_outputs[s]);
    if (profile) {
      step.profile_ms +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      step.profile_runs += 1;
    }
    if (!status.ok()) {
      std::string context = step.op_type + " '" + step.node_name + "'";
      // A kernel's NodeError names the node already ("MatMulNBits 'q': ...").
      if (status.message().rfind(context + ": ", 0) == 0) {
        return what.empty() ? status : status.WithContext(what);
      }
      return status.WithContext(what.empty() ? context : what + ": " + context);
    }
    if (step.check_non_finite) {
      for (const Tensor& out : binding.step_outputs[s]) {
        if (out.is_valid() && AnyNonFinite(out)) {
          CountNonFiniteStep();
          break;
        }
      }
    }
  }
  for (auto& [id, destination] : binding.copies) {
    const Tensor& source = binding.slots[id];
    if (source.byte_size() > 0) {
      std::memcpy(destination.raw_data(), source.raw_data(), source.byte_size());
    }
  }
  return Status::Ok();
}

}  // namespace qtune::runtime
