// oneDNN fp32 qtune::Attention (fusion/fused_ops.h): Q, K, V in their [B, S, H*D]
// projection layout, read per head through strided memory descriptors (no transpose
// copies):
//   1. matmul  Q [B,H,S,D] (strides S*HD, D, HD, 1) x K^T [B,H,D,T] (strides T*HD, D, 1,
//      HD) -> scores [B,H,S,T] in a scratch buffer, the scale as the output scale;
//   2. the mask added with numpy broadcasting (a loop; oneDNN's binary post-op supports
//      only some broadcasts);
//   3. softmax over T, in place: SoftmaxRows (softmax_rows.h) on CPUs with AVX-512, 1.5x
//      faster than oneDNN 2.6's softmax on the ViT's 591 rows of 197; elsewhere oneDNN's
//      (its AVX2 kernel is 2x faster than SoftmaxRows' portable loop);
//   4. matmul  scores x V [B,H,T,D] -> Y [B,H,S,D] written with strides (S*HD, D, HD, 1),
//      which is the merged [B, S, H*D].
// Declines (the reference kernel runs) when oneDNN offers only its ref implementations.
#include <optional>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"
#include "runtime/kernels/softmax_rows.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

struct AttentionDims {
  int64_t b = 0, h = 0, s = 0, t = 0, d = 0;
  int64_t hidden() const { return h * d; }
};

class OnednnAttentionKernel : public Kernel {
 public:
  // softmax_pd: oneDNN's softmax over the score rows, or nullopt for SoftmaxRows.
  OnednnAttentionKernel(AttentionDims dims, std::vector<int64_t> mask_strides, bool has_mask,
                        int threads, dnnl::matmul::primitive_desc scores_pd,
                        std::optional<dnnl::softmax_forward::primitive_desc> softmax_pd,
                        dnnl::matmul::primitive_desc context_pd)
      : dims_(dims),
        mask_strides_(std::move(mask_strides)),
        has_mask_(has_mask),
        threads_(threads),
        scores_pd_(std::move(scores_pd)),
        softmax_pd_(std::move(softmax_pd)),
        context_pd_(std::move(context_pd)),
        scores_(scores_pd_),
        context_(context_pd_),
        scratch_(dims.b * dims.h * dims.s * dims.t) {
    if (softmax_pd_) softmax_ = dnnl::softmax_forward(*softmax_pd_);
  }

  std::string Describe() const override {
    return "onednn:attention:" + onednn::ImplName(scores_pd_);
  }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      float* scores = scratch_.data();
      scores_args_.Bind(DNNL_ARG_SRC, scores_pd_.src_desc(), inputs[0].raw_data());
      scores_args_.Bind(DNNL_ARG_WEIGHTS, scores_pd_.weights_desc(), inputs[1].raw_data());
      scores_args_.Bind(DNNL_ARG_DST, scores_pd_.dst_desc(), scores);
      scores_args_.Execute(scores_);
      if (has_mask_) AddMask(inputs[3].data<float>(), scores);
      if (softmax_pd_) {
        softmax_args_.Bind(DNNL_ARG_SRC, softmax_pd_->src_desc(), scores);
        softmax_args_.Bind(DNNL_ARG_DST, softmax_pd_->dst_desc(), scores);
        softmax_args_.Execute(softmax_);
      } else {
        SoftmaxRows(scores, scores, dims_.b * dims_.h * dims_.s, dims_.t, threads_);
      }
      context_args_.Bind(DNNL_ARG_SRC, context_pd_.src_desc(), scores);
      context_args_.Bind(DNNL_ARG_WEIGHTS, context_pd_.weights_desc(), inputs[2].raw_data());
      context_args_.Bind(DNNL_ARG_DST, context_pd_.dst_desc(), outputs[0].raw_data());
      context_args_.Execute(context_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "running attention");
    }
  }

 private:
  void AddMask(const float* mask, float* scores) const {
    const int64_t* st = mask_strides_.data();
    for (int64_t b = 0; b < dims_.b; ++b) {
      for (int64_t h = 0; h < dims_.h; ++h) {
        for (int64_t s = 0; s < dims_.s; ++s) {
          const float* m = mask + b * st[0] + h * st[1] + s * st[2];
          float* row = scores + ((b * dims_.h + h) * dims_.s + s) * dims_.t;
          if (st[3] == 1) {
            for (int64_t t = 0; t < dims_.t; ++t) row[t] += m[t];
          } else {
            for (int64_t t = 0; t < dims_.t; ++t) row[t] += m[0];
          }
        }
      }
    }
  }

  AttentionDims dims_;
  std::vector<int64_t> mask_strides_;
  bool has_mask_;
  int threads_;
  dnnl::matmul::primitive_desc scores_pd_;
  std::optional<dnnl::softmax_forward::primitive_desc> softmax_pd_;
  dnnl::matmul::primitive_desc context_pd_;
  dnnl::matmul scores_;
  dnnl::softmax_forward softmax_;  // empty when softmax_pd_ is
  dnnl::matmul context_;
  std::vector<float> scratch_;
  onednn::ExecArgs scores_args_, softmax_args_, context_args_;
};

// Strides over [B,H,S,T] of a mask of `sizes` broadcast to `full`, or empty if it does not
// broadcast.
std::vector<int64_t> MaskStrides(const std::vector<int64_t>& sizes, const int64_t full[4]) {
  if (sizes.size() > 4) return {};
  std::vector<int64_t> strides(4, 0);
  const size_t offset = 4 - sizes.size();
  int64_t stride = 1;
  for (size_t i = 4; i-- > offset;) {
    const int64_t n = sizes[i - offset];
    if (n != 1 && n != full[i]) return {};
    strides[i] = n == 1 ? 0 : stride;
    stride *= n;
  }
  return strides;
}

StatusOr<std::optional<KernelChoice>> CreateOnednnAttentionKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (!IsQtuneOp(node, "Attention") || request.inputs.size() < 3 || request.outputs.empty() ||
      request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  for (size_t i = 0; i < 3; ++i) {
    const ValueInfo* in = request.inputs[i];
    if (in == nullptr || in->dtype != DataType::kFloat32 || in->sizes.size() != 3) {
      return NotApplicable();
    }
  }
  const std::vector<int64_t>& q = request.inputs[0]->sizes;
  const std::vector<int64_t>& k = request.inputs[1]->sizes;
  AttentionDims dims;
  dims.b = q[0];
  dims.s = q[1];
  dims.t = k[1];
  dims.h = node.GetInt("num_heads", 0);
  if (dims.h <= 0 || q[2] % dims.h != 0) return NotApplicable();
  dims.d = q[2] / dims.h;
  if (dims.b * dims.s * dims.t * dims.d == 0) return NotApplicable();
  const bool has_mask = request.inputs.size() > 3 && request.inputs[3] != nullptr;
  std::vector<int64_t> mask_strides(4, 0);
  if (has_mask) {
    const int64_t full[4] = {dims.b, dims.h, dims.s, dims.t};
    if (request.inputs[3]->dtype != DataType::kFloat32) return NotApplicable();
    mask_strides = MaskStrides(request.inputs[3]->sizes, full);
    if (mask_strides.empty()) return NotApplicable(request, "the mask does not broadcast");
  }
  onednn::SetThreads(request.threads);
  try {
    const memory::dim b = dims.b, h = dims.h, s = dims.s, t = dims.t, d = dims.d;
    const memory::dim hd = dims.hidden();
    using dt = memory::data_type;
    memory::desc q_md({b, h, s, d}, dt::f32, {s * hd, d, hd, 1});
    memory::desc kt_md({b, h, d, t}, dt::f32, {t * hd, d, 1, hd});
    memory::desc scores_md({b, h, s, t}, dt::f32, memory::format_tag::abcd);
    memory::desc v_md({b, h, t, d}, dt::f32, {t * hd, d, hd, 1});
    memory::desc y_md({b, h, s, d}, dt::f32, {s * hd, d, hd, 1});
    dnnl::primitive_attr scaled;
    const float scale = node.GetFloat("scale", 1.0f);
    if (scale != 1.0f) scaled.set_output_scales(0, {scale});
    dnnl::matmul::primitive_desc scores_pd(dnnl::matmul::desc(q_md, kt_md, scores_md), scaled,
                                           onednn::Engine());
    std::optional<dnnl::softmax_forward::primitive_desc> softmax_pd;
    if (!SoftmaxRowsUseAvx512()) {
      memory::desc rows_md({b * h * s, t}, dt::f32, memory::format_tag::ab);
      softmax_pd.emplace(
          dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, rows_md, 1),
          onednn::Engine());
    }
    dnnl::matmul::primitive_desc context_pd(dnnl::matmul::desc(scores_md, v_md, y_md),
                                            onednn::Engine());
    for (const std::string& impl :
         {onednn::ImplName(scores_pd), onednn::ImplName(context_pd),
          softmax_pd ? onednn::ImplName(*softmax_pd) : std::string("native")}) {
      if (onednn::IsReferenceImpl(impl)) {
        return NotApplicable(request,
                             "oneDNN offers only its slow reference implementation (" + impl + ")");
      }
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnAttentionKernel>(
        dims, std::move(mask_strides), has_mask, request.threads, std::move(scores_pd),
        std::move(softmax_pd), std::move(context_pd));
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.output_layouts = {Layout::kPlain};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

}  // namespace

void RegisterOnednnAttentionKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_attention",
                     .ops = {{"qtune", "Attention"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateOnednnAttentionKernel});
}

}  // namespace qtune::runtime
