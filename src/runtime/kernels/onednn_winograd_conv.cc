// fp32 3x3 convolution with stride 1 and one pixel of padding, group 1 (Conv, and
// qtune::FusedConv with a residual sum and/or Relu), by Winograd's F(m x m, 3x3)
// (winograd_transforms.h) on channels-last activations. With P = (m + 2)^2 positions, per
// chunk of output tiles:
//
//   V = input transform of the chunk's tiles             [P, tiles, C]
//   M = V x U, one batched oneDNN matmul (brgemm)       [P, tiles, K]
//   Y = output transform of M, + bias (+ sum), Relu      into [N, H, W, K]
//
// with U, the transformed weights [P, C, K], packed once at creation. The chunk is sized
// for V and M to stay in cache. m = 4 (4x fewer multiplications than the direct
// convolution) where its U, 4x the direct weights, fits kMaxWeightBytes; else m = 2
// (2.25x fewer, U 16/9 of them). ResNet-18's 3x3 convolutions run at oneDNN's brgconv
// peak, so this is the only way left to make them faster (oneDNN 2.6's own Winograd wants
// blocked layouts, and the reorders around it made the network slower).
//
// Taken where it measured faster: in ResNet-18 (1 thread, Intel Xeon) a 56x56 64->64 layer
// takes 1.08 ms at m = 2 and 0.64 at m = 4 against the direct convolution's 1.54, a
// 28x28 128->128 one 0.98 (m = 2) against 1.5; but the 14x14 256->256 layers took 1.5-1.8
// against 1.5 (U of 4 MiB read from memory for 49 tiles): see kMaxWeightBytes, kMinPixels
// and kMinChannels.
#include <omp.h>

#include <algorithm>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_band_product.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/onednn_exec_args.h"
#include "runtime/kernels/winograd_transforms.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;
using winograd::kLanes;

constexpr int64_t kChunkBytes = 512 * 1024;            // V and M of one chunk
constexpr int64_t kMaxWeightBytes = int64_t{1} << 20;  // U of 128 -> 128 channels
constexpr int64_t kMinPixels = 144;                    // per sample (a 12x12 output)
// With fewer channels the transforms cost about what the products save (a Fashion-MNIST
// ResNet's 16- and 32-channel layers: 0.019 ms direct, 0.022 ms here).
constexpr int64_t kMinChannels = 64;

struct WinogradGeometry {
  int64_t batch = 0, channels = 0, out_channels = 0;
  winograd::Tiles tiles;
  int64_t chunk = 0;  // tiles per matrix product; a sample's last chunk may be shorter
  bool relu = false;
};

// A cache-line aligned array of floats (each 16-float store of a transform then writes
// one cache line, not parts of two).
class LineAligned {
 public:
  void Resize(int64_t n) {
    storage_.resize(static_cast<size_t>(n + kLineFloats));
    const auto address = reinterpret_cast<uintptr_t>(storage_.data());
    const uintptr_t misalignment = address % (kLineFloats * sizeof(float));
    data_ = storage_.data() + (misalignment == 0 ? 0 : kLineFloats - misalignment / sizeof(float));
  }
  float* data() { return data_; }

 private:
  static constexpr int64_t kLineFloats = 16;
  std::vector<float> storage_;
  float* data_ = nullptr;
};

struct ChunkScratch {
  LineAligned v, m;
  std::vector<uint8_t> scratchpad;
  onednn::ExecArgs args;
};

class WinogradConvKernel final : public Kernel {
 public:
  WinogradConvKernel(WinogradGeometry g, int threads, onednn::BandProduct chunk,
                     std::optional<onednn::BandProduct> tail, memory weights,
                     std::vector<float> bias, std::string impl)
      : g_(g),
        threads_(threads > 0 ? threads : omp_get_max_threads()),
        chunk_(std::move(chunk)),
        tail_(std::move(tail)),
        weights_(std::move(weights)),
        bias_(std::move(bias)),
        impl_(std::move(impl)),
        scratch_(static_cast<size_t>(threads_)) {
    const size_t scratchpad = onednn::BandScratchpadBytes({&chunk_, tail_ ? &*tail_ : nullptr});
    for (ChunkScratch& s : scratch_) {
      s.v.Resize(g.tiles.positions() * g.chunk * g.channels);
      s.m.Resize(g.tiles.positions() * g.chunk * g.out_channels);
      s.scratchpad.resize(scratchpad);
    }
  }

  std::string Describe() const override {
    return "onednn:winograd_" + std::to_string(g_.tiles.size) + "x3:" + impl_;
  }

  // With at least as many chunks as threads, each thread runs whole chunks on the serial
  // products and its own scratch (onednn::RunBands).
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* x = inputs[0].data<float>();
    const float* sum = inputs.size() > kFusedConvSumInput && inputs[kFusedConvSumInput].is_valid()
                           ? inputs[kFusedConvSumInput].data<float>()
                           : nullptr;
    float* y = outputs[0].data<float>();
    const int64_t per_sample = (g_.tiles.count() + g_.chunk - 1) / g_.chunk;
    return onednn::RunBands(
        g_.batch * per_sample, threads_, [&](int64_t c, int worker, int threads) {
          return RunChunk(x, sum, y, c / per_sample, (c % per_sample) * g_.chunk, scratch_[worker],
                          threads);
        });
  }

 private:
  // Tiles first .. first+chunk-1 (fewer in the last chunk) of sample n.
  Status RunChunk(const float* x, const float* sum, float* y, int64_t n, int64_t first,
                  ChunkScratch& s, int threads) const {
    const int64_t rows = std::min(g_.chunk, g_.tiles.count() - first);
    const onednn::BandProduct& product = rows == g_.chunk ? chunk_ : *tail_;
    const int64_t pixels = g_.tiles.height * g_.tiles.width;
    const int64_t out_offset = n * pixels * g_.out_channels;
    winograd::TransformInput(x + n * pixels * g_.channels, g_.tiles, g_.channels, first, rows,
                             s.v.data(), rows * g_.channels);
    try {
      product.Execute(s.args, threads != threads_, s.v.data(), s.m.data(), s.scratchpad.data(),
                      weights_, /*bias=*/std::nullopt);
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "Winograd convolution's matrix product");
    }
    winograd::TransformOutput(s.m.data(), rows * g_.out_channels, g_.tiles, g_.out_channels, first,
                              rows, bias_.empty() ? nullptr : bias_.data(),
                              sum != nullptr ? sum + out_offset : nullptr, g_.relu, y + out_offset);
    return Status::Ok();
  }

  WinogradGeometry g_;
  int threads_;
  onednn::BandProduct chunk_;
  std::optional<onednn::BandProduct> tail_;
  memory weights_;  // U [positions, C, K] in the matmul's packed layout
  std::vector<float> bias_;
  std::string impl_;
  std::vector<ChunkScratch> scratch_;  // one per thread
};

// The geometry when `request` is a convolution this kernel takes, else why not.
StatusOr<WinogradGeometry> Match(const KernelRequest& request) {
  RETURN_IF_ERROR(onednn::CheckFloatConvWithConstantWeights(request, 4));
  auto no = [](const std::string& why) { return FailedPreconditionError(why); };
  const ir::Node& node = request.node;
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& w = *request.inputs[1];
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  if (w.sizes[2] != 3 || w.sizes[3] != 3) return no("not a 3x3 kernel");
  const onednn::ConvGeometry geo = onednn::ComputeConvGeometry(node, x.sizes, w.sizes, y);
  const memory::dims one = {1, 1}, zero = {0, 0};
  if (geo.strides != one || geo.dilations != zero || geo.pad_begin != one || y[2] != x.sizes[2] ||
      y[3] != x.sizes[3]) {
    return no("not stride 1 with one pixel of padding");
  }
  WinogradGeometry g;
  g.batch = x.sizes[0];
  g.channels = x.sizes[1];
  g.out_channels = w.sizes[0];
  g.tiles = {x.sizes[2], x.sizes[3], 4};
  if (g.channels % kLanes != 0 || g.out_channels % kLanes != 0 || g.batch == 0) {
    return no("channel counts not multiples of 16");
  }
  if (g.channels < kMinChannels || g.out_channels < kMinChannels) {
    return no("fewer than " + std::to_string(kMinChannels) + " channels in or out");
  }
  // F(4x4, 3x3) where its transformed weights fit, else F(2x2, 3x3).
  auto weight_bytes = [&] {
    return g.tiles.positions() * g.channels * g.out_channels * int64_t{sizeof(float)};
  };
  if (weight_bytes() > kMaxWeightBytes) g.tiles.size = 2;
  if (weight_bytes() > kMaxWeightBytes || g.tiles.height * g.tiles.width < kMinPixels) {
    return no("too few tiles for its weights: the direct convolution is faster");
  }
  if (IsFusedConv(node)) {
    const Activation activation = ReadActivation(node);
    if (!(activation.op.empty() || activation.op == "Relu") || activation.has_post_linear()) {
      return no("its activation is not Relu");
    }
    g.relu = activation.op == "Relu";
  }
  const int64_t tile_bytes =
      g.tiles.positions() * (g.channels + g.out_channels) * int64_t{sizeof(float)};
  g.chunk = std::min(g.tiles.count(), std::max<int64_t>(8, kChunkBytes / tile_bytes));
  // An odd chunk: with an even one the 16 positions a transform step stores or loads are
  // often a multiple of 4 KiB apart, and fight for the same L1 sets.
  if (g.chunk < g.tiles.count() && g.chunk % 2 == 0) --g.chunk;
  return g;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnWinogradConvKernel(const KernelRequest& request) {
  StatusOr<WinogradGeometry> g = Match(request);
  if (!g.ok()) return NotApplicable(request, g.status().message());
  const int64_t c_count = g->channels, k_count = g->out_channels;
  const int64_t positions = g->tiles.positions();
  const ValueInfo* b = request.input(2);
  const bool has_sum = request.input(kFusedConvSumInput) != nullptr;
  onednn::SetThreads(request.threads);
  try {
    using dt = memory::data_type;
    using tag = memory::format_tag;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto describe = [&](int64_t rows, const memory::desc& weights) {
      memory::desc v({positions, rows, c_count}, dt::f32, tag::abc);
      memory::desc m({positions, rows, k_count}, dt::f32, tag::abc);
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(v, weights, m), attr,
                                          onednn::Engine());
    };
    const memory::desc u_plain({positions, c_count, k_count}, dt::f32, tag::abc);
    const memory::desc u_any({positions, c_count, k_count}, dt::f32, tag::any);
    dnnl::matmul::primitive_desc pd = describe(g->chunk, u_any);
    const memory::desc packed = pd.weights_desc();
    // The product of `rows` tiles on the packed weights, or nullopt for oneDNN's `ref`.
    auto product = [&](int64_t rows) {
      return onednn::MakeBandProduct(request.threads, [&] { return describe(rows, packed); });
    };
    std::optional<onednn::BandProduct> chunk = product(g->chunk), tail;
    if (const int64_t rest = g->tiles.count() % g->chunk; chunk && rest != 0) {
      tail = product(rest);
      if (!tail) chunk.reset();
    }
    if (!chunk) return NotApplicable(request, "oneDNN offers only its slow reference matmul here");
    ASSIGN_OR_RETURN(
        Tensor u, Tensor::AllocateUninitialized(DataType::kFloat32, {positions, c_count, k_count}));
    winograd::TransformWeights(request.inputs[1]->constant.data<float>(), k_count, c_count,
                               g->tiles.size, u.data<float>());
    ASSIGN_OR_RETURN(memory weights, onednn::ReorderConstant(u, u_plain, packed));
    std::vector<float> bias;
    if (b != nullptr) {
      const float* values = b->constant.data<float>();
      bias.assign(values, values + k_count);
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<WinogradConvKernel>(*g, request.threads, std::move(*chunk),
                                                         std::move(tail), std::move(weights),
                                                         std::move(bias), onednn::ImplName(pd));
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.input_layouts[0] = Layout::kNhwc;
    if (has_sum) {
      choice.input_layouts[kFusedConvSumInput] = Layout::kNhwc;
      choice.inplace_input = static_cast<int>(kFusedConvSumInput);
    }
    choice.output_layouts = {Layout::kNhwc};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnWinogradConvKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_winograd_conv",
                     .priority = 200,
                     .ops = {{"", "Conv"}, {"qtune", "FusedConv"}},
                     .input_dtypes = {DataType::kFloat32},
                     .reads = {Layout::kNhwc},
                     .factory = &CreateOnednnWinogradConvKernel});
}

}  // namespace qtune::runtime
