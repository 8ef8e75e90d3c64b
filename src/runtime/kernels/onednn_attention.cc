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
// On CPUs with AVX-512F native_attention.cc ranks first (it keeps each block's scores in
// L1 instead of this scratch of B*H*S*T floats); this kernel serves the others, and
// bench/kernels/attention_bench compares the two.
#include <optional>
#include <vector>

#include "runtime/kernels/attention_geometry.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"
#include "runtime/kernels/softmax_rows.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

class OnednnAttentionKernel : public Kernel {
 public:
  // softmax_pd: oneDNN's softmax over the score rows, or nullopt for SoftmaxRows.
  OnednnAttentionKernel(AttentionGeometry dims, int threads, dnnl::matmul::primitive_desc scores_pd,
                        std::optional<dnnl::softmax_forward::primitive_desc> softmax_pd,
                        dnnl::matmul::primitive_desc context_pd)
      : dims_(dims),
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
      if (dims_.has_mask) AddMask(inputs[3].data<float>(), scores);
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
    const int64_t* st = dims_.mask_strides.data();
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

  AttentionGeometry dims_;
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

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnAttentionKernel(const KernelRequest& request) {
  const std::optional<AttentionGeometry> geometry = AttentionGeometryOf(request);
  if (!geometry) return NotApplicable();
  const AttentionGeometry& dims = *geometry;
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
    if (dims.scale != 1.0f) scaled.set_output_scales(0, {dims.scale});
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
        dims, request.threads, std::move(scores_pd), std::move(softmax_pd), std::move(context_pd));
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.output_layouts = {Layout::kPlain};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnAttentionKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_attention",
                     .ops = {{"qtune", "Attention"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateOnednnAttentionKernel});
}

}  // namespace qtune::runtime
