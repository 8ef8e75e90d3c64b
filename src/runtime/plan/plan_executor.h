// Runs a compiled Plan on caller buffers through a PlanBinding: the tensors of every step
// bound once (constants, arena intermediates, aliases), so a run only re-points the
// inputs and outputs (Rebind) and then calls the kernels. Session::Run uses it for models
// and the control-flow kernels for If/Loop/Scan bodies; a warm run allocates nothing.
//
// Not thread-safe: the owner runs one binding at a time (Session::Run serializes runs; a
// control-flow kernel runs inside one of them).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/plan/plan.h"

namespace qtune::runtime {

// Tensors bound to a PlanExecutor's inputs and outputs, with each step's argument lists
// built in advance. Valid while the bound buffers and the PlanExecutor live; it holds
// views of the caller's buffers, never a share of their ownership.
struct PlanBinding {
  std::vector<Tensor> slots;
  std::vector<std::vector<Tensor>> step_inputs;
  std::vector<std::vector<Tensor>> step_outputs;
  // Outputs the plan does not write in place (an input or constant passed through, an
  // output listed twice): copied from slot `first` into `second` after the steps ran.
  std::vector<std::pair<int, Tensor>> copies;
  // Per plan output: the index into `copies` that fills it, or -1 when the plan writes
  // it in place.
  std::vector<int> output_copy;
};

class PlanExecutor {
 public:
  // Takes the plan and allocates its arena.
  static StatusOr<std::unique_ptr<PlanExecutor>> Create(std::unique_ptr<Plan> plan);
  PlanExecutor(const PlanExecutor&) = delete;
  PlanExecutor& operator=(const PlanExecutor&) = delete;

  const Plan& plan() const { return *plan_; }
  // `inputs`: one per plan input; `outputs`: one per plan output, with the sizes (in the
  // value's layout) the plan computes. InternalError on a dtype or size mismatch.
  StatusOr<PlanBinding> Bind(std::span<const Tensor> inputs, std::span<const Tensor> outputs);
  // Re-points a binding made by Bind on this executor at other buffers of the same types
  // and sizes, without allocating. InternalError on a mismatch.
  Status Rebind(PlanBinding& binding, std::span<const Tensor> inputs,
                std::span<const Tensor> outputs);
  // Runs the steps on the bound tensors. `what` (may be empty) names the owner in errors;
  // `profile` adds each step's time to PlanStep::profile_ms.
  // Plans run by the kernels of a profiled plan (control-flow bodies) are profiled too.
  Status Run(PlanBinding& binding, const std::string& what, bool profile = false);

 private:
  PlanExecutor(std::unique_ptr<Plan> plan, std::shared_ptr<std::byte[]> arena)
      : plan_(std::move(plan)), arena_(std::move(arena)) {}
  Status RunSteps(PlanBinding& binding, const std::string& what, bool profile);
  std::unique_ptr<Plan> plan_;
  std::shared_ptr<std::byte[]> arena_;
};

}  // namespace qtune::runtime
