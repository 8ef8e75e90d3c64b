// What Loop and Scan share: a body run once per iteration, with loop-carried values fed
// from each iteration's outputs to the next one's inputs.
//
// Body inputs, in order: `pre` values the kernel writes before each iteration (Loop: the
// iteration number), the carried values, `slices` the kernel writes before each iteration
// (Scan: one slice of each scan input), then the outer-scope values. Body outputs: the
// carried values, then the per-iteration outputs (scan outputs) the kernel collects.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/control/subgraph_program.h"

namespace qtune::runtime {

using SizesList = std::vector<std::vector<int64_t>>;

struct RecurrenceInputs {
  std::vector<ValueInfo> pre;      // dtype and sizes
  std::vector<ValueInfo> carried;  // initial values' dtype and sizes
  std::vector<ValueInfo> slices;
  SizesList outer;
};

struct RecurrenceShapes {
  // Carried sizes entering each iteration, and after the last one: one entry when they
  // never change (stable), else trip + 1 entries.
  std::vector<SizesList> carried;
  bool stable() const { return carried.size() == 1; }
  const SizesList& final_carried() const { return carried.back(); }
  // The body's outputs in the first iteration (constants included).
  std::vector<ValueInfo> first_outputs;
  // The per-iteration outputs' dtype and sizes (the same in every iteration).
  std::vector<ValueInfo> per_iteration;
};

// Given the body's outputs of the first iteration, the number of iterations when it is
// known at compile time.
using StaticTripFn =
    std::function<StatusOr<std::optional<int64_t>>(const std::vector<ValueInfo>& first_outputs)>;

// Infers the body for the first iteration and, when carried sizes change, for every
// iteration (which needs a static trip count, at most kMaxShapeIterations). Errors name
// `node` and the carried value or scan output at fault.
inline constexpr int64_t kMaxShapeIterations = 4096;
StatusOr<RecurrenceShapes> InferRecurrence(const ir::Node& node, const SubgraphProgram& body,
                                           const RecurrenceInputs& inputs,
                                           const StaticTripFn& static_trip);

// Runs the iterations. Owns two sets of carried buffers (in and out, swapped after each
// iteration), the pre/slice inputs and the per-iteration outputs; with stable sizes,
// iterations allocate nothing.
class RecurrenceRunner {
 public:
  static StatusOr<std::unique_ptr<RecurrenceRunner>> Create(SubgraphProgram& body,
                                                            const RecurrenceInputs& inputs,
                                                            const RecurrenceShapes& shapes);
  RecurrenceRunner(const RecurrenceRunner&) = delete;
  RecurrenceRunner& operator=(const RecurrenceRunner&) = delete;

  // Buffers the kernel fills before each iteration / reads after it.
  Tensor& pre(size_t i) { return pre_[i]; }
  Tensor& slice(size_t i) { return slices_[i]; }
  const Tensor& per_iteration_output(size_t k) const { return per_iteration_[k]; }
  // The current carried value's bytes (initial values after Start; after an iteration,
  // that iteration's outputs).
  const void* carried_data(size_t c) const { return storage_[current_][c].raw_data(); }
  size_t carried_bytes(size_t c) const;

  // Copies the initial carried values in and binds the outer values for this run.
  Status Start(std::span<const Tensor> initial_carried, std::span<const Tensor> outer);
  // Runs iteration t (0, 1, ... in order after Start).
  Status RunIteration(int64_t t);
  // The body's compiled plans (one when the sizes are stable), each once.
  std::vector<const Plan*> plans() const;

 private:
  RecurrenceRunner() = default;
  // Binds iteration t's buffers, or re-points `previous` (a binding of the same plan) at
  // them and returns it.
  StatusOr<PlanBinding> BindIteration(int64_t t, int side, PlanBinding* previous = nullptr);
  std::vector<Tensor> Views(int side, const SizesList& sizes) const;
  const SizesList& SizesEntering(int64_t t) const;

  const SubgraphProgram* body_ = nullptr;
  RecurrenceShapes shapes_;
  std::vector<DataType> carried_dtypes_;
  std::vector<PlanExecutor*> plans_;  // one when stable, else one per iteration
  std::vector<Tensor> storage_[2];    // flat buffers, each large enough for every iteration
  std::vector<Tensor> pre_, slices_, per_iteration_, outer_;
  std::optional<PlanBinding> stable_bindings_[2];  // input side 0 / 1, re-pointed per Start
  int current_ = 0;
  int64_t next_iteration_ = 0;
};

}  // namespace qtune::runtime
