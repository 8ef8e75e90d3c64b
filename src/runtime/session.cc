#include "runtime/session.h"

#include <algorithm>

#include "core/check.h"
#include "core/shape.h"
#include "passes/pipeline.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/plan/non_finite.h"
#include "runtime/reference/block_scale_check.h"
#include "runtime/reference/registry.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::runtime {

StatusOr<std::unique_ptr<Session>> Session::Create(const ir::Graph& graph,
                                                   const SessionOptions& options) {
  return Create(graph.Clone(), options);
}

StatusOr<std::unique_ptr<Session>> Session::Create(std::unique_ptr<ir::Graph> copy,
                                                   const SessionOptions& options) {
  QTUNE_CHECK(copy != nullptr);
  // Before fold_constants turns NVFP4's two-level scales into unnamed float weights.
  RETURN_IF_ERROR(CheckBlockScaledInitializers(*copy));
  if (options.optimize && !options.graph_is_clean) {
    passes::PassOptions pass_options;
    pass_options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs,
                                int64_t opset) { return EvaluateNode(node, inputs, opset); };
    ASSIGN_OR_RETURN(auto report, passes::RunPipeline(*copy, pass_options));
    (void)report;
  }
  SessionOptions effective = options;
  for (const auto& [key, value] : copy->info().metadata_props) {
    if (key != kBf16NodesMetadataKey) continue;
    for (size_t begin = 0; begin <= value.size();) {
      size_t end = std::min(value.find(',', begin), value.size());
      if (end > begin) effective.bf16_nodes.insert(value.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  return std::unique_ptr<Session>(new Session(std::move(copy), std::move(effective)));
}

StatusOr<PlanExecutor*> Session::PlanFor(const std::map<std::string, std::vector<int64_t>>& sizes,
                                         bool reference, int threads) {
  if (threads <= 0) threads = options_.threads;
  const PlanKey key{sizes, reference, threads};
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  CompileOptions compile_options{threads, options_.use_onednn && !reference, options_.optimize,
                                 options_.bf16, options_.bf16_nodes};
  StatusOr<std::unique_ptr<Plan>> plan = Compile(*graph_, sizes, compile_options);
  if (!plan.ok() && IsComputedAtRunTime(plan.status())) {
    plans_[key] = nullptr;  // runs in stages (Runner)
    return nullptr;
  }
  if (!plan.ok()) return plan.status();
  ASSIGN_OR_RETURN(std::unique_ptr<PlanExecutor> executor, PlanExecutor::Create(std::move(*plan)));
  PlanExecutor* raw = executor.get();
  plans_[key] = std::move(executor);
  return raw;
}

StatusOr<const Plan*> Session::Prepare(const std::map<std::string, std::vector<int64_t>>& sizes) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(PlanExecutor * executor, PlanFor(sizes));
  if (executor == nullptr) {
    return FailedPreconditionError(
        "the model has sizes that depend on values computed at run time; its plans are "
        "compiled in stages while it runs (see `qtune run --print-plan`)");
  }
  return &executor->plan();
}

std::map<int, int64_t> Session::RunsByThreads() {
  std::lock_guard<std::mutex> lock(mutex_);
  return runs_by_threads_;
}

std::string Session::DescribeLastRun() {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_runner_ != nullptr ? last_runner_->LastRunToString() : std::string();
}

GraphRunner& Session::Runner(bool reference) {
  std::unique_ptr<GraphRunner>& runner = runners_[reference ? 1 : 0];
  if (!runner) {
    GraphRunnerOptions options;
    options.compile = CompileOptions{options_.threads, options_.use_onednn && !reference,
                                     options_.optimize, options_.bf16, options_.bf16_nodes};
    options.profile = options_.profile;
    runner = std::make_unique<GraphRunner>(*graph_, options);
  }
  return *runner;
}

StatusOr<std::vector<RunValue>> Session::RunStaged(std::vector<RunValue> inputs, bool reference) {
  if (options_.use_onednn) onednn::SetThreads(options_.threads);
  const int64_t non_finite_before = NonFiniteStepsSeen();
  last_runner_ = &Runner(reference);
  StatusOr<std::vector<RunValue>> outputs = last_runner_->Run(inputs);
  if (outputs.ok() && !reference && options_.use_onednn &&
      NonFiniteStepsSeen() != non_finite_before) {
    // A step made NaN or inf from finite inputs: the outputs come from the reference tier.
    last_runner_ = &Runner(true);
    outputs = last_runner_->Run(inputs);
  }
  return outputs;
}

StatusOr<NamedValues> Session::RunValues(const NamedValues& inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool all_tensors = true;
  for (const ir::Value* v : graph_->inputs()) all_tensors &= v->type().is_tensor();
  for (const ir::Value* v : graph_->outputs()) all_tensors &= v->type().is_tensor();
  for (const auto& [name, value] : inputs) all_tensors &= value.is_tensor();
  NamedValues outputs;
  if (all_tensors) {
    NamedTensors tensors;
    for (const auto& [name, value] : inputs) tensors.emplace_back(name, value.tensor());
    ASSIGN_OR_RETURN(NamedTensors result, RunLocked(tensors));
    for (auto& [name, tensor] : result) outputs.emplace_back(name, RunValue::Of(std::move(tensor)));
    return outputs;
  }
  const auto& graph_inputs = graph_->inputs();
  std::vector<RunValue> ordered(graph_inputs.size());
  std::vector<bool> given(graph_inputs.size(), false);
  bool reference = false;
  for (const auto& [name, value] : inputs) {
    size_t i = 0;
    while (i < graph_inputs.size() && graph_inputs[i]->name() != name) ++i;
    if (i == graph_inputs.size()) {
      return InvalidArgumentError("the model has no input named '" + name + "'; its inputs are" +
                                  InputList());
    }
    if (given[i]) return InvalidArgumentError("input '" + name + "' is given twice");
    const ir::TensorType& type = graph_inputs[i]->type();
    if (type.kind == ir::ValueKind::kSequence && !value.is_sequence()) {
      return InvalidArgumentError("input '" + name + "' must be a sequence of tensors");
    }
    if (type.kind == ir::ValueKind::kTensor && !value.is_tensor()) {
      return InvalidArgumentError("input '" + name + "' must be a tensor");
    }
    if (value.is_tensor() && value.tensor().is_valid() && type.dtype != DataType::kUndefined &&
        value.tensor().dtype() != type.dtype) {
      return InvalidArgumentError(
          "input '" + name + "' is " + std::string(DataTypeName(value.tensor().dtype())) +
          " but the model expects " + std::string(DataTypeName(type.dtype)));
    }
    if (options_.use_onednn && value.is_tensor() && value.tensor().is_valid()) {
      reference |= AnyNonFinite(value.tensor());
    }
    ordered[i] = value;
    given[i] = true;
  }
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    if (!given[i] && graph_inputs[i]->type().kind != ir::ValueKind::kOptional) {
      return InvalidArgumentError("missing input '" + graph_inputs[i]->name() +
                                  "'; the model's inputs are" + InputList());
    }
    if (!given[i]) ordered[i] = RunValue::None();
  }
  ASSIGN_OR_RETURN(std::vector<RunValue> values, RunStaged(std::move(ordered), reference));
  for (size_t i = 0; i < values.size(); ++i) {
    outputs.emplace_back(graph_->outputs()[i]->name(), std::move(values[i]));
  }
  return outputs;
}

std::string Session::InputList() const {
  std::string list;
  for (const ir::Value* input : graph_->inputs()) list += " '" + input->name() + "'";
  return list;
}

Status Session::MatchInputs(const NamedTensors& inputs) {
  const auto& graph_inputs = graph_->inputs();
  given_.assign(graph_inputs.size(), nullptr);
  for (const auto& [name, tensor] : inputs) {
    size_t i = 0;
    while (i < graph_inputs.size() && graph_inputs[i]->name() != name) ++i;
    if (i == graph_inputs.size()) {
      return InvalidArgumentError("the model has no input named '" + name + "'; its inputs are" +
                                  InputList());
    }
    if (given_[i] != nullptr) return InvalidArgumentError("input '" + name + "' is given twice");
    given_[i] = &tensor;
  }
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    const ir::Value* input = graph_inputs[i];
    if (given_[i] == nullptr) {
      return InvalidArgumentError("missing input '" + input->name() + "'; the model's inputs are" +
                                  InputList());
    }
    const Tensor& t = *given_[i];
    if (t.dtype() != input->dtype()) {
      return InvalidArgumentError("input '" + input->name() + "' is " +
                                  std::string(DataTypeName(t.dtype())) + " but the model expects " +
                                  std::string(DataTypeName(input->dtype())));
    }
    const auto& shape = input->type().shape;
    if (!shape) continue;
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
  return Status::Ok();
}

StatusOr<PlanExecutor*> Session::ExecutorForGivenInputs(bool reference) {
  // The reference tier runs on one thread whatever the count; only fast plans adapt.
  const int threads = reference || !options_.use_onednn
                          ? options_.threads
                          : ThreadsForRun(options_.threads, options_.thread_policy);
  // Fast path: the sizes of the last run (no map built, nothing allocated).
  if (last_ != nullptr && last_reference_ == reference && last_->plan().threads == threads) {
    const Plan& plan = last_->plan();
    bool same = true;
    for (size_t i = 0; same && i < given_.size(); ++i) {
      same = given_[i]->sizes() == plan.values[plan.input_ids[i]].sizes;
    }
    if (same) return last_;
  }
  std::map<std::string, std::vector<int64_t>> sizes;
  for (size_t i = 0; i < given_.size(); ++i)
    sizes[graph_->inputs()[i]->name()] = given_[i]->sizes();
  ASSIGN_OR_RETURN(last_, PlanFor(sizes, reference, threads));
  last_reference_ = reference;
  return last_;
}

StatusOr<NamedTensors> Session::Run(const NamedTensors& inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  return RunLocked(inputs);
}

StatusOr<NamedTensors> Session::RunLocked(const NamedTensors& inputs) {
  RETURN_IF_ERROR(MatchInputs(inputs));
  bool reference = false;  // NaN or inf in the inputs (see session.h)
  if (options_.use_onednn) {
    for (const Tensor* tensor : given_) reference |= AnyNonFinite(*tensor);
  }
  ASSIGN_OR_RETURN(PlanExecutor * executor, ExecutorForGivenInputs(reference));
  if (executor == nullptr) {  // sizes that depend on values: run in stages
    std::vector<RunValue> values;
    for (const Tensor* tensor : given_) values.push_back(RunValue::Of(*tensor));
    ASSIGN_OR_RETURN(std::vector<RunValue> results, RunStaged(std::move(values), reference));
    NamedTensors outputs;
    for (size_t i = 0; i < results.size(); ++i) {
      const std::string& name = graph_->outputs()[i]->name();
      if (!results[i].is_tensor()) {
        return InvalidArgumentError("output '" + name +
                                    "' is a sequence or an optional; run the model with "
                                    "Session::RunValues");
      }
      outputs.emplace_back(name, std::move(results[i].tensor()));
    }
    return outputs;
  }
  last_runner_ = nullptr;
  const Plan& plan = executor->plan();
  ++runs_by_threads_[plan.threads];

  NamedTensors outputs;  // the only allocations of a warm run: what the caller gets
  outputs.reserve(plan.output_ids.size());
  for (size_t i = 0; i < plan.output_ids.size(); ++i) {
    const PlanValue& v = plan.values[plan.output_ids[i]];
    // Not zero-filled: each output is written whole, by the kernel of the step that makes
    // it or by the executor's copy (every kernel writes all of its outputs:
    // tests/runtime/kernels_write_whole_outputs_test.cc).
    ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateUninitialized(v.dtype, v.physical_sizes()));
    outputs.emplace_back(graph_->outputs()[i]->name(), std::move(t));
  }
  input_views_.resize(given_.size());
  for (size_t i = 0; i < given_.size(); ++i) input_views_[i].ViewOf(*given_[i]);
  output_views_.resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) output_views_[i].ViewOf(outputs[i].second);
  const int64_t non_finite_before = NonFiniteStepsSeen();
  RETURN_IF_ERROR(RunBound(*executor, reference));
  if (!reference && NonFiniteStepsSeen() != non_finite_before) {
    // A step made NaN or inf from finite inputs: the outputs come from the reference tier.
    ASSIGN_OR_RETURN(executor, ExecutorForGivenInputs(true));
    RETURN_IF_ERROR(RunBound(*executor, true));
  }
  return outputs;
}

Status Session::RunBound(PlanExecutor& executor, bool reference) {
  auto binding = bindings_.find(&executor);
  if (binding == bindings_.end()) {
    ASSIGN_OR_RETURN(PlanBinding b, executor.Bind(input_views_, output_views_));
    binding = bindings_.emplace(&executor, std::move(b)).first;
  } else {
    RETURN_IF_ERROR(executor.Rebind(binding->second, input_views_, output_views_));
  }
  if (options_.use_onednn && !reference) onednn::SetThreads(executor.plan().threads);
  return executor.Run(binding->second, "", options_.profile);
}

}  // namespace qtune::runtime
