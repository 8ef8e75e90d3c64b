// oneDNN fp32 elementwise kernels: binary arithmetic with broadcasting (Add, Sub, Mul, Div,
// Max, Min) and unary activations. Rank-4 operands run in kNhwc when their producer left
// them there, so a chain of convolutions and elementwise ops needs no reorders.
#include <limits>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

// Runs one primitive over (up to) two inputs and one output; constants are bound once.
class OnednnElementwiseKernel : public Kernel {
 public:
  OnednnElementwiseKernel(dnnl::primitive primitive, std::string impl,
                          std::vector<std::pair<int, memory::desc>> input_args,
                          std::vector<std::optional<memory>> constants, memory::desc dst)
      : primitive_(std::move(primitive)),
        impl_(std::move(impl)),
        input_args_(std::move(input_args)),
        constants_(std::move(constants)),
        dst_(dst) {}

  std::string Describe() const override { return "onednn:" + impl_; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      for (size_t i = 0; i < input_args_.size(); ++i) {
        if (constants_[i]) {
          args_.Set(input_args_[i].first, *constants_[i]);
        } else {
          args_.Bind(input_args_[i].first, input_args_[i].second, inputs[i].raw_data());
        }
      }
      args_.Bind(DNNL_ARG_DST, dst_, outputs[0].raw_data());
      args_.Execute(primitive_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "running an elementwise primitive");
    }
  }

 private:
  dnnl::primitive primitive_;
  std::string impl_;
  std::vector<std::pair<int, memory::desc>> input_args_;  // per node input: arg id, desc
  std::vector<std::optional<memory>> constants_;          // per node input
  memory::desc dst_;
  onednn::ExecArgs args_;
};

std::vector<int64_t> ExtendRank(std::vector<int64_t> sizes, size_t rank) {
  while (sizes.size() < rank) sizes.insert(sizes.begin(), 1);
  return sizes;
}

memory::desc Desc(const std::vector<int64_t>& sizes, Layout layout) {
  memory::format_tag tag =
      layout == Layout::kNhwc ? memory::format_tag::nhwc : onednn::PlainTag(sizes.size());
  return memory::desc(onednn::ToDims(sizes), memory::data_type::f32, tag);
}

std::optional<dnnl::algorithm> BinaryAlgorithm(const std::string& op) {
  if (op == "Add") return dnnl::algorithm::binary_add;
  if (op == "Sub") return dnnl::algorithm::binary_sub;
  if (op == "Mul") return dnnl::algorithm::binary_mul;
  if (op == "Div") return dnnl::algorithm::binary_div;
  if (op == "Max") return dnnl::algorithm::binary_max;
  if (op == "Min") return dnnl::algorithm::binary_min;
  return std::nullopt;
}

bool Commutative(const std::string& op) {
  return op == "Add" || op == "Mul" || op == "Max" || op == "Min";
}

// kNhwc when the output is rank 4 and some non-constant input already lives in kNhwc.
Layout ChooseLayout(const KernelRequest& r, size_t rank) {
  if (rank != 4) return Layout::kPlain;
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    if (r.inputs[i] && !r.inputs[i]->has_constant() && r.input_layouts[i] == Layout::kNhwc) {
      return Layout::kNhwc;
    }
  }
  return Layout::kPlain;
}

// Memory for a constant operand in `layout` (reordered once).
StatusOr<memory> ConstantMemory(const Tensor& constant, const std::vector<int64_t>& sizes,
                                Layout layout) {
  memory::desc plain(onednn::ToDims(sizes), memory::data_type::f32, onednn::PlainTag(sizes.size()));
  return onednn::ReorderConstant(constant, plain, Desc(sizes, layout));
}

StatusOr<std::optional<KernelChoice>> CreateBinary(const KernelRequest& r, dnnl::algorithm alg) {
  const std::string& op = r.node.op_type();
  if (r.inputs.size() != 2 || !r.inputs[0] || !r.inputs[1]) return NotApplicable();
  const std::vector<int64_t>& out = r.outputs[0]->sizes;
  size_t rank = out.size();
  if (rank == 0 || rank > 5) return NotApplicable();
  // oneDNN broadcasts src1 into src0's shape: src0 must have the output's sizes.
  size_t first = 0;
  if (ExtendRank(r.inputs[0]->sizes, rank) != out) {
    if (!Commutative(op) || ExtendRank(r.inputs[1]->sizes, rank) != out) return NotApplicable();
    first = 1;
  }
  size_t second = 1 - first;
  Layout layout = ChooseLayout(r, rank);
  if (r.inputs[first]->has_constant()) return NotApplicable();  // folded earlier if both are
  std::vector<int64_t> s0 = out, s1 = ExtendRank(r.inputs[second]->sizes, rank);
  if (!r.inputs[second]->has_constant() && r.inputs[second]->sizes.size() != rank) {
    return NotApplicable();
  }
  onednn::SetThreads(r.threads);
  dnnl::binary::desc desc(alg, Desc(s0, layout), Desc(s1, layout), Desc(out, layout));
  dnnl::binary::primitive_desc pd(desc, onednn::Engine());
  if (onednn::IsReferenceImpl(onednn::ImplName(pd))) {
    return NotApplicable(
        r, "oneDNN offers only its slow reference implementation (" + onednn::ImplName(pd) + ")");
  }
  std::vector<std::pair<int, memory::desc>> args(2);
  std::vector<std::optional<memory>> constants(2);
  args[first] = {DNNL_ARG_SRC_0, Desc(s0, layout)};
  args[second] = {DNNL_ARG_SRC_1, Desc(s1, layout)};
  if (r.inputs[second]->has_constant()) {
    ASSIGN_OR_RETURN(constants[second], ConstantMemory(r.inputs[second]->constant, s1, layout));
  }
  KernelChoice choice;
  choice.kernel = std::make_unique<OnednnElementwiseKernel>(
      dnnl::binary(pd), "binary:" + onednn::ImplName(pd), std::move(args), std::move(constants),
      Desc(out, layout));
  choice.input_layouts = {layout, layout};
  choice.output_layouts = {layout};
  return std::optional<KernelChoice>(std::move(choice));
}

struct EltwiseParams {
  dnnl::algorithm algorithm;
  float alpha = 0, beta = 0;
};

std::optional<EltwiseParams> UnaryAlgorithm(const ir::Node& node) {
  using alg = dnnl::algorithm;
  const std::string& op = node.op_type();
  if (op == "Relu") return EltwiseParams{alg::eltwise_relu};
  if (op == "LeakyRelu") return EltwiseParams{alg::eltwise_relu, node.GetFloat("alpha", 0.01f)};
  if (op == "Sigmoid") return EltwiseParams{alg::eltwise_logistic};
  if (op == "Tanh") return EltwiseParams{alg::eltwise_tanh};
  if (op == "HardSwish") return EltwiseParams{alg::eltwise_hardswish};
  if (op == "Exp") return EltwiseParams{alg::eltwise_exp};
  if (op == "Sqrt") return EltwiseParams{alg::eltwise_sqrt};
  if (op == "Abs") return EltwiseParams{alg::eltwise_abs};
  if (op == "Elu") return EltwiseParams{alg::eltwise_elu, node.GetFloat("alpha", 1.0f)};
  if (op == "Softplus") return EltwiseParams{alg::eltwise_soft_relu};
  if (op == "Neg") return EltwiseParams{alg::eltwise_linear, -1.0f, 0.0f};
  if (op == "Erf") return std::nullopt;  // no plain erf in oneDNN 2.6
  return std::nullopt;
}

// Clip with bounds known at compile time (attributes before opset 11, constant inputs
// after); nullopt when a bound is computed at run time.
std::optional<EltwiseParams> ClipParams(const KernelRequest& r) {
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (r.opset < 11) {
    lo = r.node.GetFloat("min", lo);
    hi = r.node.GetFloat("max", hi);
  } else {
    for (size_t i = 1; i < 3 && i < r.inputs.size(); ++i) {
      if (r.inputs[i] == nullptr) continue;
      const Tensor& bound = r.inputs[i]->constant;
      if (!r.inputs[i]->has_constant() || bound.num_elements() != 1) return std::nullopt;
      (i == 1 ? lo : hi) = bound.data<float>()[0];
    }
  }
  return EltwiseParams{dnnl::algorithm::eltwise_clip_v2, lo, hi};
}

StatusOr<std::optional<KernelChoice>> CreateUnary(const KernelRequest& r, EltwiseParams params) {
  if (r.inputs.empty() || !r.inputs[0] || r.inputs[0]->has_constant()) return NotApplicable();
  const std::vector<int64_t>& sizes = r.inputs[0]->sizes;
  if (sizes.empty() || sizes.size() > 5) return NotApplicable();
  Layout layout = ChooseLayout(r, sizes.size());
  onednn::SetThreads(r.threads);
  memory::desc md = Desc(sizes, layout);
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, params.algorithm, md,
                                   params.alpha, params.beta);
  dnnl::eltwise_forward::primitive_desc pd(desc, onednn::Engine());
  if (onednn::IsReferenceImpl(onednn::ImplName(pd))) {
    return NotApplicable(
        r, "oneDNN offers only its slow reference implementation (" + onednn::ImplName(pd) + ")");
  }
  KernelChoice choice;
  choice.kernel = std::make_unique<OnednnElementwiseKernel>(
      dnnl::eltwise_forward(pd), "eltwise:" + onednn::ImplName(pd),
      std::vector<std::pair<int, memory::desc>>{{DNNL_ARG_SRC, md}},
      std::vector<std::optional<memory>>(1), md);
  choice.input_layouts.assign(r.inputs.size(), Layout::kPlain);  // Clip's bounds: constants
  choice.input_layouts[0] = layout;
  choice.output_layouts = {layout};
  return std::optional<KernelChoice>(std::move(choice));
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnElementwiseKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (!node.domain().empty() || node.num_outputs() != 1 || request.outputs[0] == nullptr ||
      request.outputs[0]->dtype != DataType::kFloat32) {
    return NotApplicable();
  }
  for (const ValueInfo* in : request.inputs) {
    if (in != nullptr && in->dtype != DataType::kFloat32) return NotApplicable();
  }
  try {
    if (auto alg = BinaryAlgorithm(node.op_type())) return CreateBinary(request, *alg);
    if (auto params = UnaryAlgorithm(node)) return CreateUnary(request, *params);
    if (node.op_type() == "Clip") {
      if (auto params = ClipParams(request)) return CreateUnary(request, *params);
    }
    return NotApplicable();
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

// The ops CreateOnednnElementwiseKernel serves (BinaryAlgorithm, UnaryAlgorithm, Clip).
std::vector<KernelOp> ElementwiseOps() {
  std::vector<KernelOp> ops;
  for (const char* op :
       {"Add", "Sub", "Mul", "Div", "Max", "Min", "Relu", "LeakyRelu", "Sigmoid", "Tanh",
        "HardSwish", "Exp", "Sqrt", "Abs", "Elu", "Softplus", "Neg", "Clip"}) {
    ops.push_back({"", op});
  }
  return ops;
}

void RegisterOnednnElementwiseKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_eltwise",
                     .ops = ElementwiseOps(),
                     .input_dtypes = {DataType::kFloat32},
                     .reads = {Layout::kPlain, Layout::kNhwc},
                     .factory = &CreateOnednnElementwiseKernel});
}

}  // namespace qtune::runtime
