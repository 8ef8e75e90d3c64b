#include "runtime/control/recurrence.h"

#include <algorithm>
#include <cstring>

#include "core/shape.h"

namespace qtune::runtime {
namespace {

SizesList BodyInputSizes(const RecurrenceInputs& in, const SizesList& carried) {
  SizesList sizes;
  for (const ValueInfo& v : in.pre) sizes.push_back(v.sizes);
  sizes.insert(sizes.end(), carried.begin(), carried.end());
  for (const ValueInfo& v : in.slices) sizes.push_back(v.sizes);
  sizes.insert(sizes.end(), in.outer.begin(), in.outer.end());
  return sizes;
}

std::string CarriedName(const SubgraphProgram& body, const RecurrenceInputs& in, size_t c) {
  return body.graph().inputs()[in.pre.size() + c]->name();
}

// Checks one iteration's outputs: count, carried dtypes, and (after the first) the
// per-iteration outputs against the first iteration's.
Status CheckOutputs(const ir::Node& node, const SubgraphProgram& body, const RecurrenceInputs& in,
                    const std::vector<ValueInfo>& outs, const RecurrenceShapes* first) {
  const size_t nc = in.carried.size();
  if (outs.size() < nc) {
    return InvalidArgumentError(body.what() + " has " + std::to_string(outs.size()) +
                                " outputs, fewer than its " + std::to_string(nc) +
                                " loop-carried values");
  }
  for (size_t c = 0; c < nc; ++c) {
    if (outs[c].dtype != in.carried[c].dtype) {
      return InvalidArgumentError(node.DebugName() + ": loop-carried value '" +
                                  CarriedName(body, in, c) + "' enters the body as " +
                                  std::string(DataTypeName(in.carried[c].dtype)) +
                                  " but leaves it as " + std::string(DataTypeName(outs[c].dtype)));
    }
  }
  if (first == nullptr) return Status::Ok();
  for (size_t k = 0; k < first->per_iteration.size(); ++k) {
    if (outs[nc + k].sizes != first->per_iteration[k].sizes) {
      return UnimplementedError(
          node.DebugName() + ": scan output " + std::to_string(k) + " has sizes [" +
          SizesToString(first->per_iteration[k].sizes) + "] in the first iteration but [" +
          SizesToString(outs[nc + k].sizes) +
          "] in a later one; stacked outputs need the same sizes in every iteration");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<RecurrenceShapes> InferRecurrence(const ir::Node& node, const SubgraphProgram& body,
                                           const RecurrenceInputs& inputs,
                                           const StaticTripFn& static_trip) {
  const size_t nc = inputs.carried.size();
  SizesList carried0;
  for (const ValueInfo& v : inputs.carried) carried0.push_back(v.sizes);
  ASSIGN_OR_RETURN(std::vector<ValueInfo> outs,
                   body.InferOutputs(BodyInputSizes(inputs, carried0)));
  RETURN_IF_ERROR(CheckOutputs(node, body, inputs, outs, nullptr));
  RecurrenceShapes shapes;
  shapes.first_outputs = outs;
  for (size_t k = nc; k < outs.size(); ++k) {
    shapes.per_iteration.push_back(MakeInfo(outs[k].dtype, outs[k].sizes));
  }
  shapes.carried.push_back(carried0);
  size_t changed = 0;
  while (changed < nc && outs[changed].sizes == carried0[changed]) ++changed;
  if (changed == nc) return shapes;  // the same sizes in every iteration

  ASSIGN_OR_RETURN(std::optional<int64_t> trip, static_trip(outs));
  const std::string what = node.DebugName() + ": loop-carried value '" +
                           CarriedName(body, inputs, changed) + "' enters the body as [" +
                           SizesToString(carried0[changed]) + "] but leaves it as [" +
                           SizesToString(outs[changed].sizes) + "]";
  if (!trip.has_value()) {
    return UnimplementedError(what +
                              ", and the number of iterations is computed at run time, so its "
                              "final sizes cannot be known before running (qtune compiles for "
                              "fixed sizes; make the trip count a constant)");
  }
  if (*trip > kMaxShapeIterations) {
    return UnimplementedError(what + ", over " + std::to_string(*trip) +
                              " iterations; qtune follows changing sizes for at most " +
                              std::to_string(kMaxShapeIterations) + " iterations");
  }
  SizesList current = carried0;
  for (int64_t t = 0; t < *trip; ++t) {
    if (t > 0) {
      ASSIGN_OR_RETURN(outs, body.InferOutputs(BodyInputSizes(inputs, current)));
      RETURN_IF_ERROR(CheckOutputs(node, body, inputs, outs, &shapes));
    }
    for (size_t c = 0; c < nc; ++c) current[c] = outs[c].sizes;
    shapes.carried.push_back(current);
  }
  return shapes;
}

StatusOr<std::unique_ptr<RecurrenceRunner>> RecurrenceRunner::Create(
    SubgraphProgram& body, const RecurrenceInputs& inputs, const RecurrenceShapes& shapes) {
  auto r = std::unique_ptr<RecurrenceRunner>(new RecurrenceRunner());
  r->body_ = &body;
  r->shapes_ = shapes;
  const size_t iterations = shapes.stable() ? 1 : shapes.carried.size() - 1;
  for (size_t t = 0; t < iterations; ++t) {
    ASSIGN_OR_RETURN(PlanExecutor * plan, body.PlanFor(BodyInputSizes(inputs, shapes.carried[t])));
    r->plans_.push_back(plan);
  }
  for (size_t c = 0; c < inputs.carried.size(); ++c) {
    int64_t most = 1;
    for (const SizesList& sizes : shapes.carried) most = std::max(most, NumElements(sizes[c]));
    r->carried_dtypes_.push_back(inputs.carried[c].dtype);
    for (auto& side : r->storage_) {
      ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(inputs.carried[c].dtype, {most}));
      side.push_back(std::move(t));
    }
  }
  for (const ValueInfo& v : inputs.pre) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(v.dtype, v.sizes));
    r->pre_.push_back(std::move(t));
  }
  for (const ValueInfo& v : inputs.slices) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(v.dtype, v.sizes));
    r->slices_.push_back(std::move(t));
  }
  for (const ValueInfo& v : shapes.per_iteration) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(v.dtype, v.sizes));
    r->per_iteration_.push_back(std::move(t));
  }
  return r;
}

const SizesList& RecurrenceRunner::SizesEntering(int64_t t) const {
  if (shapes_.stable()) return shapes_.carried[0];
  return shapes_.carried[std::min<size_t>(static_cast<size_t>(t), shapes_.carried.size() - 1)];
}

size_t RecurrenceRunner::carried_bytes(size_t c) const {
  return static_cast<size_t>(NumElements(SizesEntering(next_iteration_)[c])) *
         DataTypeSize(carried_dtypes_[c]);
}

std::vector<Tensor> RecurrenceRunner::Views(int side, const SizesList& sizes) const {
  std::vector<Tensor> views;
  for (size_t c = 0; c < sizes.size(); ++c) {
    views.push_back(Tensor::Borrow(carried_dtypes_[c], sizes[c],
                                   const_cast<void*>(storage_[side][c].raw_data())));
  }
  return views;
}

StatusOr<PlanBinding> RecurrenceRunner::BindIteration(int64_t t, int side, PlanBinding* previous) {
  std::vector<Tensor> in = pre_;
  for (Tensor& v : Views(side, SizesEntering(t))) in.push_back(std::move(v));
  in.insert(in.end(), slices_.begin(), slices_.end());
  in.insert(in.end(), outer_.begin(), outer_.end());
  std::vector<Tensor> out = Views(1 - side, SizesEntering(t + 1));
  out.insert(out.end(), per_iteration_.begin(), per_iteration_.end());
  PlanExecutor* plan = plans_[shapes_.stable() ? 0 : static_cast<size_t>(t)];
  if (previous == nullptr) return plan->Bind(in, out);
  RETURN_IF_ERROR(plan->Rebind(*previous, in, out));
  return std::move(*previous);
}

Status RecurrenceRunner::Start(std::span<const Tensor> initial_carried,
                               std::span<const Tensor> outer) {
  current_ = 0;
  next_iteration_ = 0;
  outer_.assign(outer.begin(), outer.end());
  for (size_t c = 0; c < initial_carried.size(); ++c) {
    if (initial_carried[c].byte_size() != carried_bytes(c)) {
      return InternalError(body_->what() + ": initial loop-carried value " + std::to_string(c) +
                           " has " + std::to_string(initial_carried[c].byte_size()) +
                           " bytes, compiled for " + std::to_string(carried_bytes(c)));
    }
    if (carried_bytes(c) > 0) {
      std::memcpy(storage_[0][c].raw_data(), initial_carried[c].raw_data(), carried_bytes(c));
    }
  }
  if (shapes_.stable()) {
    // Only the outer values move between runs: a binding made before is re-pointed.
    for (int side : {0, 1}) {
      std::optional<PlanBinding>& bound = stable_bindings_[side];
      ASSIGN_OR_RETURN(PlanBinding b, BindIteration(0, side, bound ? &*bound : nullptr));
      bound = std::move(b);
    }
  }
  return Status::Ok();
}

Status RecurrenceRunner::RunIteration(int64_t t) {
  if (t != next_iteration_) {
    return InternalError(body_->what() + ": iterations must run in order from 0");
  }
  if (!shapes_.stable() && static_cast<size_t>(t) >= plans_.size()) {
    return FailedPreconditionError(body_->what() + ": iteration " + std::to_string(t) +
                                   " is beyond the " + std::to_string(plans_.size()) +
                                   " iterations the changing sizes were compiled for");
  }
  if (shapes_.stable()) {
    RETURN_IF_ERROR(plans_[0]->Run(*stable_bindings_[current_], body_->what()));
  } else {
    ASSIGN_OR_RETURN(PlanBinding b, BindIteration(t, current_));
    RETURN_IF_ERROR(plans_[static_cast<size_t>(t)]->Run(b, body_->what()));
  }
  current_ = 1 - current_;
  ++next_iteration_;
  return Status::Ok();
}

std::vector<const Plan*> RecurrenceRunner::plans() const {
  std::vector<const Plan*> plans;
  for (const PlanExecutor* executor : plans_) {
    if (std::find(plans.begin(), plans.end(), &executor->plan()) == plans.end()) {
      plans.push_back(&executor->plan());
    }
  }
  return plans;
}

}  // namespace qtune::runtime
