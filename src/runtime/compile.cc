#include "runtime/compile.h"

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <unordered_map>

#include "core/shape.h"
#include "runtime/control/control_flow.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/plan/memory_planner.h"
#include "runtime/plan/non_finite.h"
#include "runtime/plan/view_ops.h"
#include "runtime/shape/infer_shapes.h"
#include "runtime/step_threads.h"

namespace qtune::runtime {
namespace {

// [N,C,H,W] orders its bytes the same in kPlain and kNhwc when H*W == 1 or C == 1, and
// trivially when it is empty (no reorder step, which would be a zero-size primitive).
bool SameBytesInBothLayouts(const std::vector<int64_t>& sizes) {
  return sizes.size() == 4 &&
         (sizes[1] == 1 || sizes[2] * sizes[3] == 1 || NumElements(sizes) == 0);
}

// The step of a node whose outputs are all empty (a batch of 0, ...): there is nothing to
// compute, so no kernel is created at all. Kernels and oneDNN primitives are not required
// to handle zero sizes (some divide by them: SIGFPE on `qtune run` with a batch of 0).
class EmptyOutputsKernel final : public Kernel {
 public:
  std::string Describe() const override { return "empty (every output has 0 elements)"; }
  Status Run(std::span<const Tensor>, std::span<Tensor>) override { return Status::Ok(); }
};

// The precision Compile marked on `node` (or on the node a fusion built it from).
Precision NodePrecision(const ir::Node& node) {
  return node.GetString(kPrecisionAttribute, "") == PrecisionName(Precision::kBfloat16)
             ? Precision::kBfloat16
             : Precision::kFloat32;
}

bool IsEmpty(const ValueInfo* info) { return info != nullptr && NumElements(info->sizes) == 0; }

// Builds the plan step by step; owns the bookkeeping that maps graph values (and their
// reordered copies) to plan value ids.
class PlanBuilder {
 public:
  PlanBuilder(const ir::Graph& graph, const ValueInfoMap& infos, const CompileOptions& options)
      : graph_(graph),
        infos_(infos),
        options_(options),
        registry_(options.registry != nullptr ? *options.registry : KernelRegistry::Builtin()),
        plan_(std::make_unique<Plan>()) {
    plan_->threads = options.threads;
  }

  Status Build() {
    for (const ir::Value* input : graph_.inputs()) {
      int id = AddValue(*input, PlanValue::Kind::kInput, Layout::kPlain);
      plan_->input_ids.push_back(id);
    }
    ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph_.TopologicalOrder());
    for (const ir::Node* node : order) RETURN_IF_ERROR(AddNode(*node));
    for (const ir::Value* output : graph_.outputs()) {
      ASSIGN_OR_RETURN(int id, IdInLayout(output, Layout::kPlain));
      plan_->output_ids.push_back(id);
    }
    MarkOutputs();
    PlanArena();
    return Status::Ok();
  }

  std::unique_ptr<Plan> Release() { return std::move(plan_); }

 private:
  int AddValue(const ir::Value& value, PlanValue::Kind kind, Layout layout) {
    const ValueInfo& info = infos_.at(&value);
    PlanValue v;
    v.name = value.name();
    v.kind = kind;
    v.dtype = info.dtype;
    v.sizes = info.sizes;
    v.layout = layout;
    if (kind == PlanValue::Kind::kConstant) v.constant = info.constant;
    plan_->values.push_back(std::move(v));
    int id = static_cast<int>(plan_->values.size()) - 1;
    ids_[{&value, layout}] = id;
    return id;
  }

  // The id of `value` in `layout`, adding a reorder step if it only exists in another one.
  StatusOr<int> IdInLayout(const ir::Value* value, Layout layout) {
    auto it = ids_.find({value, layout});
    if (it != ids_.end()) return it->second;
    const ValueInfo& info = infos_.at(value);
    if (info.has_constant()) return AddValue(*value, PlanValue::Kind::kConstant, Layout::kPlain);
    Layout other = layout == Layout::kPlain ? Layout::kNhwc : Layout::kPlain;
    auto source = ids_.find({value, other});
    if (source == ids_.end()) {
      return InternalError("value '" + value->name() + "' is used before it is produced");
    }
    if (SameBytesInBothLayouts(info.sizes)) {
      int id = AddValue(*value, PlanValue::Kind::kAlias, layout);
      plan_->values[id].alias_of = source->second;
      return id;
    }
    ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                     CreateReorderKernel(info.dtype, info.sizes, other, layout));
    int id = AddValue(*value, PlanValue::Kind::kIntermediate, layout);
    plan_->values[id].name += layout == Layout::kNhwc ? "@nhwc" : "@plain";
    PlanStep step{"reorder " + value->name(), "Reorder", std::move(kernel), {source->second}, {id}};
    if (options_.threads > 1 && IsSmallReorder(NumElements(info.sizes))) step.threads = 1;
    plan_->steps.push_back(std::move(step));
    return id;
  }

  Status AddNode(const ir::Node& node) {
    bool all_constant = true;
    for (const ir::Value* out : node.outputs()) {
      if (out != nullptr && !infos_.at(out).has_constant()) all_constant = false;
    }
    if (all_constant) return Status::Ok();  // folded at compile time

    KernelRequest request{node, graph_.onnx_opset(), options_.threads, {}, {}, {}};
    request.precision = options_.bf16 ? Precision::kBfloat16 : NodePrecision(node);
    for (const ir::Value* in : node.inputs()) {
      request.inputs.push_back(in ? &infos_.at(in) : nullptr);
      Layout current = Layout::kPlain;
      if (in != nullptr && !ids_.count({in, Layout::kPlain}) && ids_.count({in, Layout::kNhwc})) {
        current = Layout::kNhwc;
      }
      request.input_layouts.push_back(current);
    }
    // Outer values a subgraph reads follow the node's inputs (control/control_flow.h).
    for (const ir::Value* in : node.implicit_inputs()) {
      request.inputs.push_back(&infos_.at(in));
      const bool nhwc_only = !ids_.count({in, Layout::kPlain}) && ids_.count({in, Layout::kNhwc});
      request.input_layouts.push_back(nhwc_only ? Layout::kNhwc : Layout::kPlain);
    }
    for (const ir::Value* out : node.outputs()) {
      request.outputs.push_back(out ? &infos_.at(out) : nullptr);
    }
    // A small step's kernel is made for one thread (step_threads.h); oneDNN's thread count
    // goes back to the plan's once it is made.
    request.threads = StepThreads(request, options_.threads);
    const bool own_threads = options_.use_onednn && request.threads != options_.threads;
    if (own_threads) onednn::SetThreads(request.threads);
    struct ThreadsBack {  // on every path, errors included
      int threads;
      bool active;
      void Restore() {
        if (active) onednn::SetThreads(threads);
        active = false;
      }
      ~ThreadsBack() { Restore(); }
    } threads_back{options_.threads, own_threads};
    std::optional<KernelChoice> choice;
    std::vector<KernelRejection> passed_over;
    std::string registration;
    const bool any_output = std::any_of(request.outputs.begin(), request.outputs.end(),
                                        [](const ValueInfo* o) { return o != nullptr; });
    const bool all_outputs_empty =
        any_output && std::all_of(request.outputs.begin(), request.outputs.end(),
                                  [](const ValueInfo* o) { return o == nullptr || IsEmpty(o); });
    // Empty computed inputs with non-empty outputs (a Concat part, a reduction over 0
    // elements): only the reference tier, which handles every size, not zero-size oneDNN
    // primitives. An empty constant is a parameter the kernel reads at creation (Resize's
    // roi placeholder) and does not send the node to the reference tier.
    const bool any_input_empty =
        std::any_of(request.inputs.begin(), request.inputs.end(),
                    [](const ValueInfo* in) { return IsEmpty(in) && !in->has_constant(); });
    if (all_outputs_empty) {
      choice = KernelChoice{std::make_unique<EmptyOutputsKernel>(), request.input_layouts,
                            std::vector<Layout>(node.num_outputs(), Layout::kPlain), -1};
    }
    if (!choice && options_.use_onednn && IsViewNode(request)) return AddView(node);
    if (!choice) {
      ASSIGN_OR_RETURN(choice, CreateControlFlowKernel(request, options_));
    }
    if (!choice) {
      // The registry's candidates for the op, then the reference tier (kernel_registry.h).
      ChooseOptions choose;
      choose.fast_tiers = options_.use_onednn && !any_input_empty;
      choose.fast_tiers_off_reason = !options_.use_onednn
                                         ? "reference tier only (use_onednn off: --reference)"
                                         : "an input is empty: only the reference tier "
                                           "handles every size";
      ASSIGN_OR_RETURN(KernelSelection selection, registry_.Choose(request, choose));
      choice = std::move(selection.choice);
      passed_over = std::move(selection.passed_over);
      registration = std::move(selection.kernel);
    }
    threads_back.Restore();  // before reorders are made for the inputs

    // A kernel gives one layout per input and output it handles; a node with more (a
    // malformed model: Softmax with two outputs) is refused instead of read past them.
    if (choice->input_layouts.size() < node.num_inputs() + node.implicit_inputs().size() ||
        choice->output_layouts.size() < node.num_outputs()) {
      return InvalidArgumentError(
          node.DebugName() + ": has " + std::to_string(node.num_inputs()) + " inputs and " +
          std::to_string(node.num_outputs()) + " outputs; its kernel (" +
          choice->kernel->Describe() + ") takes " + std::to_string(choice->input_layouts.size()) +
          " and " + std::to_string(choice->output_layouts.size()) + "; check the model's " +
          node.op_type() + " node against the ONNX operator's definition");
    }
    PlanStep step{node.name(), node.op_type(), std::move(choice->kernel), {}, {}};
    step.inplace_input = choice->inplace_input;
    step.precision = choice->precision;
    step.passed_over = std::move(passed_over);
    step.registration = std::move(registration);
    if (request.threads != options_.threads) step.threads = request.threads;
    // The reference tier propagates NaN and inf; the fast tier checks where they can start.
    step.check_non_finite =
        options_.use_onednn && MayCreateNonFinite(node, {request.inputs.data(), node.num_inputs()});
    for (size_t i = 0; i < node.num_inputs() + node.implicit_inputs().size(); ++i) {
      const ir::Value* in =
          i < node.num_inputs() ? node.input(i) : node.implicit_inputs()[i - node.num_inputs()];
      if (in == nullptr) {
        step.inputs.push_back(-1);
        continue;
      }
      ASSIGN_OR_RETURN(int id, IdInLayout(in, choice->input_layouts[i]));
      step.inputs.push_back(id);
    }
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      const ir::Value* out = node.output(i);
      step.outputs.push_back(out == nullptr ? -1
                                            : AddValue(*out, PlanValue::Kind::kIntermediate,
                                                       choice->output_layouts[i]));
    }
    plan_->steps.push_back(std::move(step));
    return Status::Ok();
  }

  // `node`'s output 0 as a view of its input 0 in kPlain (see view_ops.h): no step.
  Status AddView(const ir::Node& node) {
    ASSIGN_OR_RETURN(int source, IdInLayout(node.input(0), Layout::kPlain));
    int id = AddValue(*node.output(0), PlanValue::Kind::kAlias, Layout::kPlain);
    plan_->values[id].alias_of = source;
    plan_->views += 1;
    return Status::Ok();
  }

  void MarkOutputs() {
    for (int id : plan_->output_ids) {
      // An alias output is copied out of its source, which then must not be in the arena
      // (the arena is reused by the next run while the caller still reads).
      id = BufferOwner(id);
      if (plan_->values[id].kind == PlanValue::Kind::kIntermediate) {
        plan_->values[id].kind = PlanValue::Kind::kOutput;
      }
    }
  }

  // The value whose buffer `id` uses (aliases are views of their source, which may be an
  // alias itself: a Reshape of a Squeeze).
  int BufferOwner(int id) const {
    while (id >= 0 && plan_->values[id].kind == PlanValue::Kind::kAlias) {
      id = plan_->values[id].alias_of;
    }
    return id;
  }

  // The input of step `s` whose buffer its output 0 can take over, or -1: the kernel
  // allows it, the input is an arena value of the same size and layout, no later step
  // reads it, and no other input of the step is (a view of) the same buffer.
  int InplaceSource(size_t s, const std::unordered_map<int, int>& last_use) const {
    const PlanStep& step = plan_->steps[s];
    if (step.inplace_input < 0 || step.outputs.empty() || step.outputs[0] < 0) return -1;
    int in = step.inputs[step.inplace_input];
    if (in < 0 || plan_->values[in].kind != PlanValue::Kind::kIntermediate) return -1;
    const PlanValue& out = plan_->values[step.outputs[0]];
    const PlanValue& src = plan_->values[in];
    if (out.byte_size() != src.byte_size() || out.layout != src.layout) return -1;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      if (static_cast<int>(i) != step.inplace_input && BufferOwner(step.inputs[i]) == in) return -1;
    }
    return last_use.at(in) == static_cast<int>(s) ? in : -1;
  }

  void PlanArena() {
    std::unordered_map<int, int> last_use;  // buffer owner -> last step reading it
    for (size_t s = 0; s < plan_->steps.size(); ++s) {
      for (int id : plan_->steps[s].inputs) {
        if (id >= 0) last_use[BufferOwner(id)] = static_cast<int>(s);
      }
    }
    std::vector<int> arena_ids;
    std::vector<BufferRequest> requests;
    std::unordered_map<int, size_t> request_of;
    for (size_t s = 0; s < plan_->steps.size(); ++s) {
      int inplace = InplaceSource(s, last_use);
      for (int id : plan_->steps[s].outputs) {
        if (id < 0 || plan_->values[id].kind != PlanValue::Kind::kIntermediate) continue;
        if (inplace >= 0 && id == plan_->steps[s].outputs[0]) {
          request_of[id] = request_of.at(inplace);
          arena_ids.push_back(id);
          continue;
        }
        request_of[id] = requests.size();
        arena_ids.push_back(id);
        int step = static_cast<int>(s);
        requests.push_back({plan_->values[id].byte_size(), step, step});
      }
      for (int id : plan_->steps[s].inputs) {
        auto it = request_of.find(BufferOwner(id));
        if (it != request_of.end()) {
          requests[it->second].last_step =
              std::max(requests[it->second].last_step, static_cast<int>(s));
        }
      }
    }
    MemoryPlan memory = PlanMemory(requests);
    for (int id : arena_ids) plan_->values[id].arena_offset = memory.offsets[request_of.at(id)];
    plan_->arena_bytes = memory.arena_bytes;
  }

  const ir::Graph& graph_;
  const ValueInfoMap& infos_;
  const CompileOptions& options_;
  const KernelRegistry& registry_;
  std::unique_ptr<Plan> plan_;
  std::map<std::pair<const ir::Value*, Layout>, int> ids_;
};

}  // namespace

StatusOr<std::unique_ptr<Plan>> Compile(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& input_sizes,
    const CompileOptions& options) {
  std::unique_ptr<ir::Graph> own = graph.Clone();
  // Per-node precision rides on the private copy as an attribute that the fusions carry
  // from a node to the fused node made from it (fusion_pipeline.h).
  if (!options.bf16_nodes.empty()) {
    for (ir::Node* node : own->nodes()) {
      if (options.bf16_nodes.count(node->name())) {
        node->SetAttribute(
            ir::Attribute::String(kPrecisionAttribute, PrecisionName(Precision::kBfloat16)));
      }
    }
  }
  ASSIGN_OR_RETURN(ValueInfoMap infos, InferShapes(*own, input_sizes, ShapeInferenceOptions{}));
  if (options.fuse) {
    SizesByName sizes;
    for (const auto& [value, info] : infos) sizes[value->name()] = {info.dtype, info.sizes};
    ASSIGN_OR_RETURN(FusionReport report, RunFusions(*own, sizes));
    if (report.total() > 0) {
      ASSIGN_OR_RETURN(infos, InferShapes(*own, input_sizes, ShapeInferenceOptions{}));
    }
  }
  if (options.use_onednn) onednn::SetThreads(options.threads);
  PlanBuilder builder(*own, infos, options);
  RETURN_IF_ERROR(builder.Build());
  std::unique_ptr<Plan> plan = builder.Release();
  plan->graph = std::move(own);
  return plan;
}

}  // namespace qtune::runtime
