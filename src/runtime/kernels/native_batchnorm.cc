// Native float32 BatchNormalization, inference mode: y = x * a[c] + b[c] with
// a = scale / sqrt(var + epsilon) and b = B - mean * a, any rank >= 2, in kPlain or kNhwc
// (the input's layout is kept; the output may take over the input's buffer). a and b are
// computed in double once, when the kernel is created, if scale, B, mean and var are
// constants, else at every run. A standalone BatchNormalization (one no Conv absorbs, e.g.
// after a Q/DQ pair) otherwise runs on the reference tier, ~10x slower.
//
// Left to the reference tier: training_mode=1 and its extra outputs, spatial=0 (opsets
// 7-8: per-element parameters), other types, and parameters that are not [C].
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/parallel_rows.h"

namespace qtune::runtime {
namespace {

struct ChannelAffine {
  std::vector<float> a, b;  // per channel
};

// The four parameters read as floats (each holds `channels` values).
ChannelAffine Fold(const float* scale, const float* bias, const float* mean, const float* var,
                   int64_t channels, double epsilon) {
  ChannelAffine affine{std::vector<float>(channels), std::vector<float>(channels)};
  for (int64_t c = 0; c < channels; ++c) {
    const double a =
        static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + epsilon);
    affine.a[c] = static_cast<float>(a);
    affine.b[c] =
        static_cast<float>(static_cast<double>(bias[c]) - static_cast<double>(mean[c]) * a);
  }
  return affine;
}

class NativeBatchNormKernel final : public Kernel {
 public:
  // `affine` is empty when the parameters are computed at run time.
  NativeBatchNormKernel(std::vector<int64_t> sizes, Layout layout, double epsilon, int threads,
                        std::optional<ChannelAffine> affine)
      : sizes_(std::move(sizes)),
        layout_(layout),
        epsilon_(epsilon),
        threads_(threads),
        affine_(std::move(affine)) {}

  std::string Describe() const override {
    return std::string("native:batch_norm:") + LayoutName(layout_) +
           (affine_ ? ":folded" : ":params_at_run_time");
  }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const int64_t channels = sizes_[1];
    ChannelAffine computed;
    const ChannelAffine* affine = affine_ ? &*affine_ : nullptr;
    if (affine == nullptr) {
      computed = Fold(inputs[1].data<float>(), inputs[2].data<float>(), inputs[3].data<float>(),
                      inputs[4].data<float>(), channels, epsilon_);
      affine = &computed;
    }
    const float* x = inputs[0].data<float>();
    float* y = outputs[0].data<float>();
    const float* a = affine->a.data();
    const float* b = affine->b.data();
    int64_t total = 1;
    for (int64_t s : sizes_) total *= s;
    if (total == 0) return Status::Ok();
    if (layout_ == Layout::kNhwc) {
      // Physical [N, H, W, C]: rows of C channels.
      ParallelRows(total / channels, channels, threads_, [&](int64_t row) {
        const float* xr = x + row * channels;
        float* yr = y + row * channels;
        for (int64_t c = 0; c < channels; ++c) yr[c] = xr[c] * a[c] + b[c];
      });
    } else {
      // [N, C, inner]: rows of one channel's inner values.
      const int64_t inner = total / (sizes_[0] * channels);
      ParallelRows(total / inner, inner, threads_, [&](int64_t row) {
        const float ar = a[row % channels], br = b[row % channels];
        const float* xr = x + row * inner;
        float* yr = y + row * inner;
        for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i] * ar + br;
      });
    }
    return Status::Ok();
  }

 private:
  std::vector<int64_t> sizes_;  // logical [N, C, ...]
  Layout layout_;
  double epsilon_;
  int threads_;
  std::optional<ChannelAffine> affine_;
};

bool IsFloat32(const ValueInfo* info) {
  return info != nullptr && info->dtype == DataType::kFloat32;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateNativeBatchNormKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if ((!node.domain().empty() && node.domain() != "ai.onnx") ||
      node.op_type() != "BatchNormalization") {
    return NotApplicable(request, "not an ONNX BatchNormalization");
  }
  if (node.GetInt("training_mode", 0) != 0) {
    return NotApplicable(request, "training_mode=1 (the reference tier computes it)");
  }
  if (request.opset < 9 && node.GetInt("spatial", 1) == 0) {
    return NotApplicable(request, "spatial=0: per-element parameters");
  }
  if (request.inputs.size() != 5 || request.outputs.empty() || request.outputs[0] == nullptr) {
    return NotApplicable(request, "needs X, scale, B, mean, var and output Y");
  }
  for (size_t i = 1; i < request.outputs.size(); ++i) {
    if (request.outputs[i] != nullptr) return NotApplicable(request, "training outputs requested");
  }
  const ValueInfo& x = *request.inputs[0];
  if (!IsFloat32(&x) || !IsFloat32(request.outputs[0]) || x.sizes.size() < 2 ||
      request.outputs[0]->sizes != x.sizes) {
    return NotApplicable(request, "X and Y must be float32 of rank >= 2");
  }
  const int64_t channels = x.sizes[1];
  for (size_t i = 1; i < 5; ++i) {
    const ValueInfo* p = request.inputs[i];
    if (!IsFloat32(p) || p->sizes != std::vector<int64_t>{channels}) {
      return NotApplicable(request, "scale, B, mean and var must be float32 [C]");
    }
  }
  const Layout layout = request.input_layouts.empty() ? Layout::kPlain : request.input_layouts[0];
  if (layout != Layout::kPlain && !(layout == Layout::kNhwc && x.sizes.size() == 4)) {
    return NotApplicable(request, "X lives in a layout other than plain or rank-4 nhwc");
  }
  const double epsilon = node.GetFloat("epsilon", 1e-5f);
  std::optional<ChannelAffine> affine;
  if (std::all_of(request.inputs.begin() + 1, request.inputs.end(),
                  [](const ValueInfo* p) { return p->has_constant(); })) {
    affine =
        Fold(request.inputs[1]->constant.data<float>(), request.inputs[2]->constant.data<float>(),
             request.inputs[3]->constant.data<float>(), request.inputs[4]->constant.data<float>(),
             channels, epsilon);
  }
  KernelChoice choice;
  choice.kernel = std::make_unique<NativeBatchNormKernel>(x.sizes, layout, epsilon, request.threads,
                                                          std::move(affine));
  choice.input_layouts = {layout, Layout::kPlain, Layout::kPlain, Layout::kPlain, Layout::kPlain};
  choice.output_layouts = {layout};
  for (size_t i = 1; i < request.outputs.size(); ++i)
    choice.output_layouts.push_back(Layout::kPlain);
  choice.inplace_input = 0;
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterNativeBatchNormKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_batch_norm",
                     .tier = KernelTier::kNative,
                     .ops = {{"", "BatchNormalization"}},
                     .input_dtypes = {DataType::kFloat32},
                     .reads = {Layout::kPlain, Layout::kNhwc},
                     .factory = &CreateNativeBatchNormKernel});
}

}  // namespace qtune::runtime
