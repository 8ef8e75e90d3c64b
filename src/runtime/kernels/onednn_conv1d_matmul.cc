// fp32 1-D convolution (Conv, and qtune::FusedConv with an activation but no residual sum,
// on [N, C, L] activations, group 1) as one matrix product on weights packed once:
//
//   cols[f, (c, k)] = X[n, c, f*stride + k*dilation - pad_begin]   (0 outside X)
//   T = activation(cols . W^T + bias)                               [F, M], oneDNN matmul
//   Y[n, m, f] = T[f, m]                                            a transpose
//
// in bands of output frames small enough for cols and T to stay in cache.
//
// oneDNN 2.6 runs a plain 1-D convolution as im2col + sgemm (gemm:jit) and repacks the
// weights on every run; this kernel packs them at creation for its matmul (brgemm on
// AVX-512 CPUs). The audio front end's STFT (1 -> 514 channels, kernel 512, stride 160,
// 16000 samples, 1 thread, Intel Xeon): 0.52 ms on gemm:jit, 0.35 ms here. Taken for at
// least kMinOutChannels output channels (see there).
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_band_product.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/onednn_exec_args.h"
#include "runtime/kernels/onednn_post_ops.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

// With fewer output channels the copies can cost more than the packed product saves, and
// oneDNN's convolution keeps those. Measured (1 thread, Intel Xeon, one Conv + Relu, old ms ->
// new ms): C 64 M 64 K 3 L 4000: 2.44 -> 1.64; C 8 M 64 K 3: 1.25 -> 0.38; C 1 M 64 K 1
// L 16000: 2.33 -> 0.60; C 512 M 512 K 3 s 2 L 3000: 23.6 -> 22.0; but C 64 M 16 K 3: 1.10
// -> 1.12, C 512 M 32 K 3: 8.7 -> 12.0, C 256 M 8 K 3: 3.0 -> 4.3.
constexpr int64_t kMinOutChannels = 64;
// cols and T of one band of frames (at least kMinBandRows frames, whatever their size).
constexpr int64_t kBandBytes = 512 * 1024;
constexpr int64_t kMinBandRows = 16;

struct Conv1dGeometry {
  int64_t batch = 0, channels = 0, length = 0, out_channels = 0, kernel = 0, frames = 0;
  int64_t stride = 1, dilation = 1, pad_begin = 0;
  int64_t band = 0;  // frames per matrix product; the last band of a sample may be shorter
  int64_t depth() const { return channels * kernel; }  // columns of cols
};

// What one band's work writes: its unfolded frames, its product, the product's scratchpad
// and arguments.
struct BandScratch {
  std::vector<float> cols, t;  // [band, C*K] and [band, M]
  std::vector<uint8_t> scratchpad;
  onednn::ExecArgs args;
};

class Conv1dMatMulKernel final : public Kernel {
 public:
  // `tail`: the product of the last band when frames % band != 0.
  Conv1dMatMulKernel(Conv1dGeometry g, int threads, onednn::BandProduct band,
                     std::optional<onednn::BandProduct> tail, memory weights,
                     std::optional<memory> bias, std::string impl)
      : g_(g),
        threads_(threads > 0 ? threads : omp_get_max_threads()),
        band_(std::move(band)),
        tail_(std::move(tail)),
        weights_(std::move(weights)),
        bias_(std::move(bias)),
        impl_(std::move(impl)),
        scratch_(static_cast<size_t>(threads_)) {
    const size_t scratchpad = onednn::BandScratchpadBytes({&band_, tail_ ? &*tail_ : nullptr});
    for (BandScratch& s : scratch_) {
      s.cols.resize(static_cast<size_t>(g.band * g.depth()));
      s.t.resize(static_cast<size_t>(g.band * g.out_channels));
      s.scratchpad.resize(scratchpad);
    }
  }

  std::string Describe() const override { return "onednn:conv1d_matmul:" + impl_; }

  // With at least as many bands as threads, each thread runs whole bands on the serial
  // products and its own scratch (onednn::RunBands). (10 s of audio at 2 threads: the Conv
  // step 2.53 -> 2.09 ms.)
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* x = inputs[0].data<float>();
    float* y = outputs[0].data<float>();
    const int64_t bands_per_sample = (g_.frames + g_.band - 1) / g_.band;
    return onednn::RunBands(
        g_.batch * bands_per_sample, threads_, [&](int64_t b, int worker, int threads) {
          return RunBand(x, y, b / bands_per_sample, (b % bands_per_sample) * g_.band,
                         scratch_[worker], threads);
        });
  }

 private:
  // Frames f0 .. f0+band-1 (fewer in the last band) of sample n; copies on `threads`.
  Status RunBand(const float* x, float* y, int64_t n, int64_t f0, BandScratch& s,
                 int threads) const {
    const int64_t rows = std::min(g_.band, g_.frames - f0);
    const onednn::BandProduct& product = rows == g_.band ? band_ : *tail_;
    Im2Col(x + n * g_.channels * g_.length, f0, rows, s.cols.data(), threads);
    try {
      product.Execute(s.args, threads != threads_, s.cols.data(), s.t.data(), s.scratchpad.data(),
                      weights_, bias_);
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "1-D convolution as a matrix product");
    }
    Transpose(s.t.data(), y + n * g_.out_channels * g_.frames, f0, rows, threads);
    return Status::Ok();
  }

  // One row of cols per output frame f0 .. f0+rows-1: for each input channel, K taps
  // `dilation` apart.
  void Im2Col(const float* x, int64_t f0, int64_t rows, float* cols, int threads) const {
    const Conv1dGeometry& g = g_;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      float* row = cols + r * g.depth();
      const int64_t start = (f0 + r) * g.stride - g.pad_begin;
      for (int64_t c = 0; c < g.channels; ++c) {
        const float* in = x + c * g.length;
        float* out = row + c * g.kernel;
        if (g.dilation == 1 && start >= 0 && start + g.kernel <= g.length) {
          std::memcpy(out, in + start, g.kernel * sizeof(float));
          continue;
        }
        for (int64_t k = 0; k < g.kernel; ++k) {
          const int64_t i = start + k * g.dilation;
          out[k] = i >= 0 && i < g.length ? in[i] : 0.0f;
        }
      }
    }
  }

  // y[m, f0 + r] = t[r, m] for r < rows, in tiles so both sides stay in cache.
  void Transpose(const float* t, float* y, int64_t f0, int64_t rows, int threads) const {
    constexpr int64_t kTile = 32;
    const int64_t frames = g_.frames, m_count = g_.out_channels;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t m0 = 0; m0 < m_count; m0 += kTile) {
      const int64_t m1 = std::min(m_count, m0 + kTile);
      for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
        const int64_t r1 = std::min(rows, r0 + kTile);
        for (int64_t m = m0; m < m1; ++m) {
          float* out = y + m * frames + f0;
          for (int64_t r = r0; r < r1; ++r) out[r] = t[r * m_count + m];
        }
      }
    }
  }

  Conv1dGeometry g_;
  int threads_;
  onednn::BandProduct band_;
  std::optional<onednn::BandProduct> tail_;
  memory weights_;  // W^T [C*K, M] in the matmul's packed layout
  std::optional<memory> bias_;
  std::string impl_;
  std::vector<BandScratch> scratch_;  // one per thread
};

// The geometry when `request` is a 1-D convolution this kernel takes, else why not.
StatusOr<Conv1dGeometry> Match(const KernelRequest& request) {
  RETURN_IF_ERROR(onednn::CheckFloatConvWithConstantWeights(request, 3));
  auto no = [](const std::string& why) { return FailedPreconditionError(why); };
  const ir::Node& node = request.node;
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& w = *request.inputs[1];
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  if (request.input(kFusedConvSumInput) != nullptr) {
    return no("it adds a residual sum");
  }
  const onednn::ConvGeometry geo = onednn::ComputeConvGeometry(node, x.sizes, w.sizes, y);
  Conv1dGeometry g;
  g.batch = x.sizes[0];
  g.channels = x.sizes[1];
  g.length = x.sizes[2];
  g.out_channels = w.sizes[0];
  g.kernel = w.sizes[2];
  g.frames = y[2];
  g.stride = geo.strides[0];
  g.dilation = geo.dilations[0] + 1;  // oneDNN's dilations are 0-based
  g.pad_begin = geo.pad_begin[0];
  if (y[0] != g.batch || y[1] != g.out_channels || g.batch * g.frames == 0) {
    return no("an empty output");
  }
  if (g.out_channels < kMinOutChannels) {
    return no("fewer than " + std::to_string(kMinOutChannels) +
              " output channels: oneDNN's convolution is as fast");
  }
  const int64_t row_bytes = (g.depth() + g.out_channels) * int64_t{sizeof(float)};
  g.band = std::min(g.frames, std::max(kMinBandRows, kBandBytes / row_bytes));
  return g;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnConv1dMatMulKernel(const KernelRequest& request) {
  StatusOr<Conv1dGeometry> g = Match(request);
  if (!g.ok()) return NotApplicable(request, g.status().message());
  const ir::Node& node = request.node;
  const ValueInfo* b = request.input(2);
  const int64_t depth = g->depth(), m_count = g->out_channels;
  onednn::SetThreads(request.threads);
  try {
    using dt = memory::data_type;
    using tag = memory::format_tag;
    // W [M, C, K] read as W^T [C*K, M]: tag ba over [depth, M].
    memory::desc w_plain({depth, m_count}, dt::f32, tag::ba);
    memory::desc w_any({depth, m_count}, dt::f32, tag::any);
    memory::desc bias_desc({1, m_count}, dt::f32, tag::ab);
    dnnl::post_ops post_ops;
    if (IsFusedConv(node)) {
      ASSIGN_OR_RETURN(bool appended, AppendActivation(node, post_ops));
      if (!appended) return NotApplicable(request, "its activation is not a oneDNN post-op");
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(post_ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // The weights are packed once for the band's product; the tail's must take that layout.
    auto describe = [&](int64_t rows, const memory::desc& weights) {
      memory::desc cols({rows, depth}, dt::f32, tag::ab), t({rows, m_count}, dt::f32, tag::ab);
      return dnnl::matmul::primitive_desc(b != nullptr
                                              ? dnnl::matmul::desc(cols, weights, bias_desc, t)
                                              : dnnl::matmul::desc(cols, weights, t),
                                          attr, onednn::Engine());
    };
    dnnl::matmul::primitive_desc pd = describe(g->band, w_any);
    const memory::desc packed = pd.weights_desc();
    // The product of `rows` frames on the packed weights, or nullopt for oneDNN's `ref`.
    auto product = [&](int64_t rows) {
      return onednn::MakeBandProduct(request.threads, [&] { return describe(rows, packed); });
    };
    const std::string impl = onednn::ImplName(pd);
    std::optional<onednn::BandProduct> band = product(g->band), tail;
    if (const int64_t rest = g->frames % g->band; band && rest != 0) {
      tail = product(rest);
      if (!tail) band.reset();
    }
    if (!band) {
      return NotApplicable(request, "oneDNN offers only its slow reference matmul here");
    }
    ASSIGN_OR_RETURN(memory weights,
                     onednn::ReorderConstant(request.inputs[1]->constant, w_plain, packed));
    std::optional<memory> bias;
    if (b != nullptr) {
      ASSIGN_OR_RETURN(bias, onednn::ReorderConstant(b->constant, bias_desc, bias_desc));
    }
    KernelChoice choice;
    choice.kernel =
        std::make_unique<Conv1dMatMulKernel>(*g, request.threads, std::move(*band), std::move(tail),
                                             std::move(weights), std::move(bias), impl);
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.output_layouts = {Layout::kPlain};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnConv1dMatMulKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_conv1d_matmul",
                     .priority = 200,
                     .ops = {{"", "Conv"}, {"qtune", "FusedConv"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateOnednnConv1dMatMulKernel});
}

}  // namespace qtune::runtime
