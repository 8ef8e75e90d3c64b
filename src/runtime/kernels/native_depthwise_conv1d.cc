// Native float32 depthwise 1-D convolution: Conv, or qtune::FusedConv with an activation
// but no residual sum, on [N, C, L] activations with group == C and one filter per channel
// (weights [C, 1, K]), any stride, dilation and pads:
//
//   Y[n, c, f] = activation(B[c] + sum_k W[c, 0, k] * X[n, c, f*stride + k*dilation - pad])
//
// with the taps outside X left out. Frames whose taps all lie inside X (the interior) are
// computed tap by tap over the whole run of frames, which the compiler vectorizes; the
// few frames at the edges one by one.
//
// oneDNN 2.6 runs a grouped 1-D convolution as im2col and one sgemm per group (gemm:jit):
// Silero VAD's 258-channel, kernel-5 depthwise layer over 8 frames took 0.059 ms there,
// for 20 thousand multiply-adds; here it takes under a microsecond.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/parallel_rows.h"

namespace qtune::runtime {
namespace {

struct DepthwiseGeometry {
  int64_t batch = 0, channels = 0, length = 0, kernel = 0, frames = 0;
  int64_t stride = 1, dilation = 1, pad_begin = 0;
  // Frames [interior_begin, interior_end) read only taps inside X.
  int64_t interior_begin = 0, interior_end = 0;
};

// Floor division for a positive divisor.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

void SetInterior(DepthwiseGeometry& g) {
  // First tap inside: f*stride >= pad; last tap inside: f*stride + (K-1)*dilation - pad < L.
  const int64_t begin = (g.pad_begin + g.stride - 1) / g.stride;
  const int64_t end =
      FloorDiv(g.length - 1 - (g.kernel - 1) * g.dilation + g.pad_begin, g.stride) + 1;
  g.interior_begin = std::min(begin, g.frames);
  g.interior_end = std::clamp(end, g.interior_begin, g.frames);
}

class NativeDepthwiseConv1dKernel final : public Kernel {
 public:
  NativeDepthwiseConv1dKernel(DepthwiseGeometry g, std::vector<float> weights,
                              std::vector<float> bias, Activation activation, int threads)
      : g_(g),
        weights_(std::move(weights)),
        bias_(std::move(bias)),
        activation_(std::move(activation)),
        threads_(threads) {}

  std::string Describe() const override { return "native:depthwise_conv1d"; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* x = inputs[0].data<float>();
    float* y = outputs[0].data<float>();
    ParallelRows(g_.batch * g_.channels, g_.frames * g_.kernel, threads_, [&](int64_t row) {
      const int64_t c = row % g_.channels;
      ConvolveRow(x + row * g_.length, weights_.data() + c * g_.kernel, bias_[c],
                  y + row * g_.frames);
      ApplyActivation(activation_, y + row * g_.frames, g_.frames);
    });
    return Status::Ok();
  }

 private:
  // One channel of one sample: x holds L values, w K taps, y receives F frames.
  void ConvolveRow(const float* x, const float* w, float bias, float* y) const {
    const int64_t s = g_.stride, d = g_.dilation, p = g_.pad_begin;
    for (int64_t f = g_.interior_begin; f < g_.interior_end; ++f) y[f] = bias;
    for (int64_t k = 0; k < g_.kernel; ++k) {
      const float wk = w[k];
      const float* xk = x + k * d - p;  // xk[f*s] is inside X for interior frames
#pragma omp simd
      for (int64_t f = g_.interior_begin; f < g_.interior_end; ++f) y[f] += wk * xk[f * s];
    }
    auto edge = [&](int64_t f) {
      float acc = bias;
      for (int64_t k = 0; k < g_.kernel; ++k) {
        const int64_t i = f * s + k * d - p;
        if (i >= 0 && i < g_.length) acc += w[k] * x[i];
      }
      y[f] = acc;
    };
    for (int64_t f = 0; f < g_.interior_begin; ++f) edge(f);
    for (int64_t f = g_.interior_end; f < g_.frames; ++f) edge(f);
  }

  DepthwiseGeometry g_;
  std::vector<float> weights_;  // [C, K]
  std::vector<float> bias_;     // [C], zeros without B
  Activation activation_;
  int threads_;
};

// The geometry when `request` is a depthwise 1-D convolution this kernel takes, else why not.
StatusOr<DepthwiseGeometry> Match(const KernelRequest& request) {
  RETURN_IF_ERROR(onednn::CheckFloatConvWindow(request, 3));
  auto no = [](const std::string& why) { return FailedPreconditionError(why); };
  const ir::Node& node = request.node;
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& w = *request.inputs[1];
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  if (request.input(kFusedConvSumInput) != nullptr) {
    return no("it adds a residual sum");
  }
  DepthwiseGeometry g;
  g.batch = x.sizes[0];
  g.channels = x.sizes[1];
  g.length = x.sizes[2];
  g.kernel = w.sizes[2];
  g.frames = y[2];
  if (node.GetInt("group", 1) != g.channels || w.sizes[0] != g.channels || w.sizes[1] != 1 ||
      y[0] != g.batch || y[1] != g.channels) {
    return no("not depthwise (group, input and output channels equal, one filter each)");
  }
  const onednn::ConvGeometry geo = onednn::ComputeConvGeometry(node, x.sizes, w.sizes, y);
  g.stride = geo.strides[0];
  g.dilation = geo.dilations[0] + 1;  // oneDNN's dilations are 0-based
  g.pad_begin = geo.pad_begin[0];
  if (g.stride < 1 || g.dilation < 1 || g.pad_begin < 0) return no("malformed window");
  SetInterior(g);
  return g;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateNativeDepthwiseConv1dKernel(
    const KernelRequest& request) {
  StatusOr<DepthwiseGeometry> g = Match(request);
  if (!g.ok()) return NotApplicable(request, g.status().message());
  const Tensor& w = request.inputs[1]->constant;
  std::vector<float> weights(w.data<float>(), w.data<float>() + g->channels * g->kernel);
  std::vector<float> bias(static_cast<size_t>(g->channels), 0.0f);
  if (request.input(2) != nullptr) {
    if (request.inputs[2]->constant.num_elements() != g->channels) {
      return NotApplicable(request, "B does not hold one value per channel");
    }
    const float* b = request.inputs[2]->constant.data<float>();
    std::copy(b, b + g->channels, bias.begin());
  }
  const Activation activation =
      IsFusedConv(request.node) ? ReadActivation(request.node) : Activation{};
  KernelChoice choice;
  choice.kernel = std::make_unique<NativeDepthwiseConv1dKernel>(
      *g, std::move(weights), std::move(bias), activation, request.threads);
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  choice.output_layouts.assign(request.outputs.size(), Layout::kPlain);
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterNativeDepthwiseConv1dKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_depthwise_conv1d",
                     .tier = KernelTier::kNative,
                     .priority = 200,
                     .ops = {{"", "Conv"}, {"qtune", "FusedConv"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateNativeDepthwiseConv1dKernel});
}

}  // namespace qtune::runtime
