// Runs an op through its reference kernel inside a plan. Elementwise ops may run on
// kNhwc data: their operands are presented in physical order (constants rank-extended
// and permuted to match once, at creation), which leaves elementwise semantics intact.
#include <cstring>
#include <unordered_set>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

bool IsLayoutFreeElementwise(const ir::Node& node) {
  static const std::unordered_set<std::string> kOps = {"Relu",
                                                       "LeakyRelu",
                                                       "Sigmoid",
                                                       "HardSigmoid",
                                                       "HardSwish",
                                                       "Tanh",
                                                       "Erf",
                                                       "Gelu",
                                                       "Exp",
                                                       "Log",
                                                       "Sqrt",
                                                       "Abs",
                                                       "Neg",
                                                       "Reciprocal",
                                                       "Floor",
                                                       "Ceil",
                                                       "Round",
                                                       "Sign",
                                                       "Softplus",
                                                       "Elu",
                                                       "Selu",
                                                       "Clip",
                                                       "Identity",
                                                       "Add",
                                                       "Sub",
                                                       "Mul",
                                                       "Div",
                                                       "Pow",
                                                       "Max",
                                                       "Min",
                                                       "Sum",
                                                       "Mean",
                                                       "Equal",
                                                       "Less",
                                                       "Greater",
                                                       "LessOrEqual",
                                                       "GreaterOrEqual",
                                                       "Where",
                                                       "PRelu",
                                                       "Not",
                                                       "And",
                                                       "Or",
                                                       "Xor"};
  return (node.domain().empty() || node.domain() == "ai.onnx") && kOps.count(node.op_type()) > 0;
}

// [C,1,1] -> [1,C,1,1] -> physical [1,1,1,C].
StatusOr<Tensor> ToNhwcOperand(const Tensor& constant) {
  std::vector<int64_t> sizes = constant.sizes();
  while (sizes.size() < 4) sizes.insert(sizes.begin(), 1);
  ASSIGN_OR_RETURN(Tensor extended, constant.Reshaped(sizes));
  if (sizes[1] == 1 || (sizes[2] == 1 && sizes[3] == 1)) {
    // Only a size-1 axis moves: the bytes stay as they are.
    return extended.Reshaped(PhysicalSizes(sizes, Layout::kNhwc));
  }
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Allocate(constant.dtype(), PhysicalSizes(sizes, Layout::kNhwc)));
  size_t elem = DataTypeSize(constant.dtype());
  const auto* src = static_cast<const std::byte*>(extended.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  int64_t n = sizes[0], c = sizes[1], h = sizes[2], w = sizes[3];
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          int64_t s = ((in * c + ic) * h + ih) * w + iw;
          int64_t d = ((in * h + ih) * w + iw) * c + ic;
          std::memcpy(dst + d * elem, src + s * elem, elem);
        }
  return out;
}

class ReferenceKernelAdapter : public Kernel {
 public:
  // REQUIRES: `node` outlives the kernel (the Session owns the graph of its plans).
  ReferenceKernelAdapter(const ir::Node& node, ReferenceKernel fn, int64_t opset,
                         std::vector<Tensor> substitutes, Layout layout)
      : node_(node),
        fn_(fn),
        opset_(opset),
        substitutes_(std::move(substitutes)),
        layout_(layout) {}

  std::string Describe() const override {
    return layout_ == Layout::kNhwc ? "reference (nhwc)" : "reference";
  }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    std::vector<Tensor> args(inputs.begin(), inputs.end());
    for (size_t i = 0; i < substitutes_.size() && i < args.size(); ++i) {
      if (substitutes_[i].is_valid()) args[i] = substitutes_[i];
    }
    ASSIGN_OR_RETURN(std::vector<Tensor> results, fn_(KernelArgs{node_, args, opset_}));
    for (size_t i = 0; i < outputs.size() && i < results.size(); ++i) {
      if (!outputs[i].is_valid()) continue;
      if (results[i].num_elements() != outputs[i].num_elements() ||
          results[i].dtype() != outputs[i].dtype()) {
        return InternalError(node_.DebugName() + ": output " + std::to_string(i) + " is " +
                             results[i].DebugString() + " but the plan expected " +
                             outputs[i].DebugString());
      }
      if (outputs[i].byte_size() > 0) {
        std::memcpy(outputs[i].raw_data(), results[i].raw_data(), outputs[i].byte_size());
      }
    }
    return Status::Ok();
  }

 private:
  const ir::Node& node_;
  ReferenceKernel fn_;
  int64_t opset_;
  std::vector<Tensor> substitutes_;  // per input: replacement constant, or invalid
  Layout layout_;
};

// True when the elementwise op should run in kNhwc: some input already is, and every
// non-constant input is rank 4 (those in kPlain get reordered).
bool PreferNhwc(const KernelRequest& request) {
  if (!IsLayoutFreeElementwise(request.node)) return false;
  if (request.outputs.empty() || request.outputs[0] == nullptr ||
      request.outputs[0]->sizes.size() != 4) {
    return false;
  }
  bool any_nhwc = false;
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const ValueInfo* in = request.inputs[i];
    if (in == nullptr || in->has_constant()) continue;
    if (in->sizes.size() != 4) return false;
    any_nhwc = any_nhwc || request.input_layouts[i] == Layout::kNhwc;
  }
  return any_nhwc;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateReferenceKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  ReferenceKernel fn = ReferenceRegistry::Get().FindFor(node);
  if (fn == nullptr) {
    return UnimplementedError(node.DebugName() + ": op " + node.op_type() +
                              (node.domain().empty() ? "" : " (domain " + node.domain() + ")") +
                              " at opset " + std::to_string(request.opset) +
                              " is not supported by qtune's runtime");
  }
  KernelChoice choice;
  Layout layout = PreferNhwc(request) ? Layout::kNhwc : Layout::kPlain;
  std::vector<Tensor> substitutes(request.inputs.size());
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  if (layout == Layout::kNhwc) {
    for (size_t i = 0; i < request.inputs.size(); ++i) {
      const ValueInfo* in = request.inputs[i];
      if (in == nullptr) continue;
      if (in->has_constant()) {
        bool is_clip_bound = node.op_type() == "Clip" && i > 0;
        if (!is_clip_bound && !in->sizes.empty()) {
          ASSIGN_OR_RETURN(substitutes[i], ToNhwcOperand(in->constant));
        }
      } else {
        choice.input_layouts[i] = Layout::kNhwc;
      }
    }
  }
  choice.output_layouts.assign(request.outputs.size(), layout);
  choice.kernel = std::make_unique<ReferenceKernelAdapter>(node, fn, request.opset,
                                                           std::move(substitutes), layout);
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterReferenceKernels(KernelRegistry& registry) {
  registry.SetFallback({.name = "reference",
                        .tier = KernelTier::kReference,
                        .priority = 0,
                        .reads = {Layout::kPlain, Layout::kNhwc},
                        .factory = &CreateReferenceKernel});
}

}  // namespace qtune::runtime
