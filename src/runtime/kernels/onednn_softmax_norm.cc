// oneDNN fp32 kernels for the transformer ops that are neither matrix products nor plain
// elementwise arithmetic:
//   Softmax             softmax_forward over one axis (opset < 13: the coerced-2D rows)
//   LayerNormalization  layer_normalization_forward over the trailing axes, with Scale and
//                       the optional B as oneDNN's separate scale and shift
//   Gelu                eltwise_gelu_erf / eltwise_gelu_tanh
// Softmax and LayerNormalization read and write kPlain; Gelu follows its input's layout.
// Each shape is viewed as the fewest dims the op needs ([outer, count, inner] or
// [rows, columns]), so any rank works.
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

using nn::Product;

memory::desc Plain(const std::vector<int64_t>& sizes) {
  return memory::desc(onednn::ToDims(sizes), memory::data_type::f32,
                      onednn::PlainTag(sizes.size()));
}

// One argument a primitive reads besides SRC: a node input bound at run time, or memory
// the kernel owns (constants reordered once, statistics buffers).
struct ExtraArg {
  int arg = 0;
  int input = -1;  // node input index, or -1 for `owned`
  memory::desc desc;
  memory owned;
};

// Runs one primitive that maps node input 0 (SRC) to output 0 (DST).
class OnednnSingleOutputKernel : public Kernel {
 public:
  OnednnSingleOutputKernel(dnnl::primitive primitive, std::string impl, memory::desc src,
                           memory::desc dst, std::vector<ExtraArg> extra)
      : primitive_(std::move(primitive)),
        impl_(std::move(impl)),
        src_(src),
        dst_(dst),
        extra_(std::move(extra)) {}

  std::string Describe() const override { return "onednn:" + impl_; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      args_.Bind(DNNL_ARG_SRC, src_, inputs[0].raw_data());
      args_.Bind(DNNL_ARG_DST, dst_, outputs[0].raw_data());
      for (const ExtraArg& e : extra_) {
        if (e.input < 0) {
          args_.Set(e.arg, e.owned);
        } else {
          args_.Bind(e.arg, e.desc, inputs[e.input].raw_data());
        }
      }
      args_.Execute(primitive_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "running " + impl_);
    }
  }

 private:
  dnnl::primitive primitive_;
  std::string impl_;
  memory::desc src_, dst_;
  std::vector<ExtraArg> extra_;
  onednn::ExecArgs args_;
};

// Float32 input 0 and output 0, default domain, exactly `op`.
bool IsFloatOp(const KernelRequest& r, const char* op) {
  const ir::Node& node = r.node;
  if (node.op_type() != op || !(node.domain().empty() || node.domain() == "ai.onnx")) return false;
  if (r.inputs.empty() || r.inputs[0] == nullptr || r.inputs[0]->has_constant()) return false;
  if (r.outputs.empty() || r.outputs[0] == nullptr) return false;
  return r.inputs[0]->dtype == DataType::kFloat32 && r.outputs[0]->dtype == DataType::kFloat32 &&
         !r.inputs[0]->sizes.empty();
}

KernelChoice Choice(std::unique_ptr<Kernel> kernel, size_t num_inputs, Layout layout,
                    int inplace_input) {
  KernelChoice choice;
  choice.kernel = std::move(kernel);
  choice.input_layouts.assign(num_inputs, Layout::kPlain);
  choice.input_layouts[0] = layout;
  choice.output_layouts = {layout};
  choice.inplace_input = inplace_input;
  return choice;
}

StatusOr<std::optional<KernelChoice>> CreateSoftmax(const KernelRequest& r) {
  const std::vector<int64_t>& sizes = r.inputs[0]->sizes;
  const int64_t rank = static_cast<int64_t>(sizes.size());
  const bool coerce_2d = r.opset < 13;
  int64_t axis = r.node.GetInt("axis", coerce_2d ? 1 : -1);
  if (axis < -rank || axis >= rank) return NotApplicable();  // the reference reports it
  if (axis < 0) axis += rank;
  // Rows of `count` values `inner` apart; before opset 13 the rows are all of [axis, rank).
  std::vector<int64_t> view = {Product(sizes, 0, axis), sizes[axis],
                               Product(sizes, axis + 1, rank)};
  if (coerce_2d) view = {view[0], view[1] * view[2], 1};
  if (view[0] * view[1] * view[2] == 0) return NotApplicable();
  onednn::SetThreads(r.threads);
  memory::desc md = Plain(view);
  dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md, 1);
  dnnl::softmax_forward::primitive_desc pd(desc, onednn::Engine());
  std::string impl = onednn::ImplName(pd);
  if (onednn::IsReferenceImpl(impl)) {
    return NotApplicable(r, "oneDNN offers only its slow reference implementation (" + impl + ")");
  }
  auto kernel = std::make_unique<OnednnSingleOutputKernel>(
      dnnl::softmax_forward(pd), "softmax:" + impl, md, md, std::vector<ExtraArg>{});
  return std::optional<KernelChoice>(Choice(std::move(kernel), r.inputs.size(), Layout::kPlain, 0));
}

StatusOr<std::optional<KernelChoice>> CreateLayerNorm(const KernelRequest& r) {
  const ir::Node& node = r.node;
  for (size_t i = 1; i < r.outputs.size(); ++i) {
    if (r.outputs[i] != nullptr) return NotApplicable();  // Mean / InvStdDev requested
  }
  if (node.GetInt("stash_type", 1) != 1) return NotApplicable();
  const std::vector<int64_t>& sizes = r.inputs[0]->sizes;
  const int64_t rank = static_cast<int64_t>(sizes.size());
  int64_t axis = node.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return NotApplicable();
  if (axis < 0) axis += rank;
  const int64_t rows = Product(sizes, 0, axis), columns = Product(sizes, axis, rank);
  if (rows * columns == 0) return NotApplicable();
  // Scale (and B) must cover exactly the normalized elements (no broadcasting inside them).
  const ValueInfo* scale = r.inputs.size() > 1 ? r.inputs[1] : nullptr;
  const ValueInfo* bias = r.inputs.size() > 2 ? r.inputs[2] : nullptr;
  for (const ValueInfo* v : {scale, bias}) {
    if (v != nullptr &&
        (v->dtype != DataType::kFloat32 || Product(v->sizes, 0, v->sizes.size()) != columns)) {
      return NotApplicable();
    }
  }
  if (scale == nullptr) return NotApplicable();
  onednn::SetThreads(r.threads);
  memory::desc md = Plain({rows, columns});
  auto flags = dnnl::normalization_flags::use_scale;
  if (bias != nullptr) flags |= dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, md,
                                               node.GetFloat("epsilon", 1e-5f), flags);
  dnnl::layer_normalization_forward::primitive_desc pd(desc, onednn::Engine());
  std::string impl = onednn::ImplName(pd);
  if (onednn::IsReferenceImpl(impl)) {
    return NotApplicable(r, "oneDNN offers only its slow reference implementation (" + impl + ")");
  }
  std::vector<ExtraArg> extra;
  memory::desc channel_md = Plain({columns});
  for (auto [arg, index, info] :
       {std::tuple{DNNL_ARG_SCALE, 1, scale}, std::tuple{DNNL_ARG_SHIFT, 2, bias}}) {
    if (info == nullptr) continue;
    ExtraArg e{arg, index, channel_md, {}};
    if (info->has_constant()) {
      ASSIGN_OR_RETURN(e.owned, onednn::ReorderConstant(info->constant, channel_md, channel_md));
      e.input = -1;
    }
    extra.push_back(std::move(e));
  }
  // Statistics the implementation wants as buffers even for inference.
  for (auto [arg, md_stat] : {std::pair{DNNL_ARG_MEAN, pd.mean_desc()},
                              std::pair{DNNL_ARG_VARIANCE, pd.variance_desc()}}) {
    if (md_stat.get_size() > 0)
      extra.push_back({arg, -1, md_stat, memory(md_stat, onednn::Engine())});
  }
  auto kernel = std::make_unique<OnednnSingleOutputKernel>(
      dnnl::layer_normalization_forward(pd), "lnorm:" + impl, md, md, std::move(extra));
  return std::optional<KernelChoice>(
      Choice(std::move(kernel), r.inputs.size(), Layout::kPlain, -1));
}

StatusOr<std::optional<KernelChoice>> CreateGelu(const KernelRequest& r) {
  std::string approximate = r.node.GetString("approximate", "none");
  dnnl::algorithm alg;
  if (approximate == "none") {
    alg = dnnl::algorithm::eltwise_gelu_erf;
  } else if (approximate == "tanh") {
    alg = dnnl::algorithm::eltwise_gelu_tanh;
  } else {
    return NotApplicable();  // the reference reports the bad attribute
  }
  const std::vector<int64_t>& sizes = r.inputs[0]->sizes;
  // Elementwise: keep a rank-4 input where its producer left it.
  Layout layout = sizes.size() == 4 ? r.input_layouts[0] : Layout::kPlain;
  std::vector<int64_t> view = {Product(sizes, 0, sizes.size())};
  memory::desc md = Plain(view);
  if (view[0] == 0) return NotApplicable();
  onednn::SetThreads(r.threads);
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, alg, md);
  dnnl::eltwise_forward::primitive_desc pd(desc, onednn::Engine());
  std::string impl = onednn::ImplName(pd);
  if (onednn::IsReferenceImpl(impl)) {
    return NotApplicable(r, "oneDNN offers only its slow reference implementation (" + impl + ")");
  }
  auto kernel = std::make_unique<OnednnSingleOutputKernel>(
      dnnl::eltwise_forward(pd), "eltwise_gelu:" + impl, md, md, std::vector<ExtraArg>{});
  return std::optional<KernelChoice>(Choice(std::move(kernel), r.inputs.size(), layout, 0));
}

template <auto Create>
StatusOr<std::optional<KernelChoice>> Guarded(const KernelRequest& request, const char* op) {
  if (!IsFloatOp(request, op)) return NotApplicable();
  try {
    return Create(request);
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnSoftmaxKernel(const KernelRequest& request) {
  return Guarded<&CreateSoftmax>(request, "Softmax");
}

StatusOr<std::optional<KernelChoice>> CreateOnednnLayerNormKernel(const KernelRequest& request) {
  return Guarded<&CreateLayerNorm>(request, "LayerNormalization");
}

StatusOr<std::optional<KernelChoice>> CreateOnednnGeluKernel(const KernelRequest& request) {
  return Guarded<&CreateGelu>(request, "Gelu");
}

void RegisterOnednnSoftmaxNormKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_softmax",
                     .ops = {{"", "Softmax"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateOnednnSoftmaxKernel});
  registry.Register({.name = "onednn_layer_norm",
                     .ops = {{"", "LayerNormalization"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateOnednnLayerNormKernel});
  registry.Register({.name = "onednn_gelu",
                     .ops = {{"", "Gelu"}},
                     .input_dtypes = {DataType::kFloat32},
                     .reads = {Layout::kPlain, Layout::kNhwc},
                     .factory = &CreateOnednnGeluKernel});
}

}  // namespace qtune::runtime
