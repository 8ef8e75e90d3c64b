// fp32 3x3 convolution with stride 1 and one pixel of padding, group 1 (Conv, and
// qtune::FusedConv with a residual sum and/or Relu), by Winograd's F(2x2, 3x3)
// (winograd_transforms.h) on channels-last activations. Per chunk of output tiles:
//
//   V = input transform of the chunk's tiles             [16, tiles, C]
//   M = V x U, one batched oneDNN matmul (brgemm)       [16, tiles, K]
//   Y = output transform of M, + bias (+ sum), Relu      into [N, H, W, K]
//
// with U, the transformed weights [16, C, K], packed once at creation. The chunk is sized
// for V and M to stay in cache. 2.25x fewer multiplications than the direct convolution;
// ResNet-18's 3x3 convolutions run at oneDNN's brgconv peak, so this is the only way left
// to make them faster (oneDNN 2.6's own Winograd wants blocked layouts, and the reorders
// around it made the network slower).
//
// Taken where it measured faster: in ResNet-18 (1 thread, Intel Xeon) a 56x56 64->64 layer
// takes 1.08 ms against the direct convolution's 1.54, a 28x28 128->128 one 0.98 against
// 1.5; but the 14x14 256->256 layers took 1.8 against 1.5 (the transformed weights, 16/9
// of the direct ones, 4 MiB, are read from memory for 49 tiles): see kMaxWeightBytes,
// kMinTiles and kMinChannels.
#include <omp.h>

#include <algorithm>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/onednn_exec_args.h"
#include "runtime/kernels/winograd_transforms.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;
using winograd::kLanes;

constexpr int64_t kPositions = 16;                     // 4x4 transformed positions
constexpr int64_t kChunkBytes = 512 * 1024;            // V and M of one chunk
constexpr int64_t kMaxWeightBytes = int64_t{1} << 20;  // U of 128 -> 128 channels
constexpr int64_t kMinTiles = 36;                      // per sample (a 12x12 output)
// With fewer channels the transforms cost about what the products save (a Fashion-MNIST
// ResNet's 16- and 32-channel layers: 0.019 ms direct, 0.022 ms here).
constexpr int64_t kMinChannels = 64;

struct WinogradGeometry {
  int64_t batch = 0, channels = 0, out_channels = 0;
  winograd::Tiles tiles;
  int64_t chunk = 0;  // tiles per matrix product; a sample's last chunk may be shorter
  bool relu = false;
};

// The batched product of `rows` tiles: `primitive` for the session's threads, `serial` made
// for one thread, which each thread runs when chunks run in parallel. Both take their
// scratchpad from the caller (threads running one primitive at once must not share it).
struct Product {
  dnnl::matmul primitive, serial;
  memory::desc v, m, scratchpad, serial_scratchpad;
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
  WinogradConvKernel(WinogradGeometry g, int threads, Product chunk, std::optional<Product> tail,
                     memory weights, std::vector<float> bias, std::string impl)
      : g_(g),
        threads_(threads > 0 ? threads : omp_get_max_threads()),
        chunk_(std::move(chunk)),
        tail_(std::move(tail)),
        weights_(std::move(weights)),
        bias_(std::move(bias)),
        impl_(std::move(impl)),
        scratch_(static_cast<size_t>(threads_)) {
    size_t scratchpad = 0;
    for (const Product* p : {&chunk_, tail_ ? &*tail_ : &chunk_}) {
      scratchpad =
          std::max({scratchpad, p->scratchpad.get_size(), p->serial_scratchpad.get_size()});
    }
    for (ChunkScratch& s : scratch_) {
      s.v.Resize(kPositions * g.chunk * g.channels);
      s.m.Resize(kPositions * g.chunk * g.out_channels);
      s.scratchpad.resize(scratchpad);
    }
  }

  std::string Describe() const override { return "onednn:winograd_2x3:" + impl_; }

  // With at least as many chunks as threads, each thread runs whole chunks on the serial
  // products and its own scratch; otherwise the chunks run in turn, the products on all
  // threads.
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* x = inputs[0].data<float>();
    const float* sum = inputs.size() > kFusedConvSumInput && inputs[kFusedConvSumInput].is_valid()
                           ? inputs[kFusedConvSumInput].data<float>()
                           : nullptr;
    float* y = outputs[0].data<float>();
    const int64_t per_sample = (g_.tiles.count() + g_.chunk - 1) / g_.chunk;
    const int64_t chunks = g_.batch * per_sample;
    if (threads_ == 1 || chunks < threads_) {
      for (int64_t c = 0; c < chunks; ++c) {
        RETURN_IF_ERROR(RunChunk(x, sum, y, c / per_sample, (c % per_sample) * g_.chunk,
                                 scratch_[0], threads_));
      }
      return Status::Ok();
    }
    std::vector<Status> failures(scratch_.size());
#pragma omp parallel for num_threads(threads_) schedule(dynamic)
    for (int64_t c = 0; c < chunks; ++c) {
      const int thread = omp_get_thread_num();
      Status status = RunChunk(x, sum, y, c / per_sample, (c % per_sample) * g_.chunk,
                               scratch_[thread], /*threads=*/1);
      if (!status.ok()) failures[thread] = std::move(status);
    }
    for (Status& status : failures) RETURN_IF_ERROR(status);
    return Status::Ok();
  }

 private:
  // Tiles first .. first+chunk-1 (fewer in the last chunk) of sample n.
  Status RunChunk(const float* x, const float* sum, float* y, int64_t n, int64_t first,
                  ChunkScratch& s, int threads) const {
    const int64_t rows = std::min(g_.chunk, g_.tiles.count() - first);
    const Product& product = rows == g_.chunk ? chunk_ : *tail_;
    const bool serial = threads != threads_;
    const int64_t pixels = g_.tiles.height * g_.tiles.width;
    const int64_t out_offset = n * pixels * g_.out_channels;
    winograd::TransformInput(x + n * pixels * g_.channels, g_.tiles, g_.channels, first, rows,
                             s.v.data(), rows * g_.channels);
    try {
      s.args.Bind(DNNL_ARG_SRC, product.v, s.v.data());
      s.args.Set(DNNL_ARG_WEIGHTS, weights_);
      s.args.Bind(DNNL_ARG_DST, product.m, s.m.data());
      s.args.Bind(DNNL_ARG_SCRATCHPAD, serial ? product.serial_scratchpad : product.scratchpad,
                  s.scratchpad.data());
      s.args.Execute(serial ? product.serial : product.primitive);
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
  Product chunk_;
  std::optional<Product> tail_;
  memory weights_;  // U [16, C, K] in the matmul's packed layout
  std::vector<float> bias_;
  std::string impl_;
  std::vector<ChunkScratch> scratch_;  // one per thread
};

// The geometry when `request` is a convolution this kernel takes, else why not.
StatusOr<WinogradGeometry> Match(const KernelRequest& request) {
  const ir::Node& node = request.node;
  const bool fused = IsFusedConv(node);
  auto no = [](const std::string& why) { return FailedPreconditionError(why); };
  if (!fused && !(node.op_type() == "Conv" && node.domain().empty())) return no("not a Conv");
  if (request.inputs.size() < 2 || request.inputs[0] == nullptr || request.inputs[1] == nullptr ||
      request.outputs.empty() || request.outputs[0] == nullptr) {
    return no("an input or the output is missing");
  }
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& w = *request.inputs[1];
  const ValueInfo* b = request.inputs.size() > 2 ? request.inputs[2] : nullptr;
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  if (x.dtype != DataType::kFloat32 || w.dtype != DataType::kFloat32 || x.sizes.size() != 4 ||
      w.sizes.size() != 4 || y.size() != 4 || !w.has_constant() ||
      (b != nullptr && (!b->has_constant() || b->dtype != DataType::kFloat32)) ||
      !onednn::WindowAttributesFit(node, 2)) {
    return no("not a float32 2-D convolution with constant weights");
  }
  if (request.precision != Precision::kFloat32) return no("it computes in bf16");
  if (node.GetInt("group", 1) != 1 || w.sizes[1] != x.sizes[1]) return no("grouped");
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
  g.tiles = {x.sizes[2], x.sizes[3]};
  if (g.channels % kLanes != 0 || g.out_channels % kLanes != 0 || g.batch == 0) {
    return no("channel counts not multiples of 16");
  }
  if (g.channels < kMinChannels || g.out_channels < kMinChannels) {
    return no("fewer than " + std::to_string(kMinChannels) + " channels in or out");
  }
  if (kPositions * g.channels * g.out_channels * int64_t{sizeof(float)} > kMaxWeightBytes ||
      g.tiles.count() < kMinTiles) {
    return no("too few tiles for its weights: the direct convolution is faster");
  }
  if (fused) {
    const Activation activation = ReadActivation(node);
    if (!(activation.op.empty() || activation.op == "Relu") || activation.has_post_linear()) {
      return no("its activation is not Relu");
    }
    g.relu = activation.op == "Relu";
  }
  const int64_t tile_bytes = kPositions * (g.channels + g.out_channels) * int64_t{sizeof(float)};
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
  const ValueInfo* b = request.inputs.size() > 2 ? request.inputs[2] : nullptr;
  const bool has_sum =
      request.inputs.size() > kFusedConvSumInput && request.inputs[kFusedConvSumInput] != nullptr;
  onednn::SetThreads(request.threads);
  try {
    using dt = memory::data_type;
    using tag = memory::format_tag;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto describe = [&](int64_t rows, const memory::desc& weights) {
      memory::desc v({kPositions, rows, c_count}, dt::f32, tag::abc);
      memory::desc m({kPositions, rows, k_count}, dt::f32, tag::abc);
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(v, weights, m), attr,
                                          onednn::Engine());
    };
    const memory::desc u_plain({kPositions, c_count, k_count}, dt::f32, tag::abc);
    const memory::desc u_any({kPositions, c_count, k_count}, dt::f32, tag::any);
    dnnl::matmul::primitive_desc pd = describe(g->chunk, u_any);
    const memory::desc packed = pd.weights_desc();
    // The product of `rows` tiles on the packed weights, or nullopt for oneDNN's `ref`.
    auto product = [&](int64_t rows) -> std::optional<Product> {
      dnnl::matmul::primitive_desc own = describe(rows, packed);
      dnnl::matmul::primitive_desc serial = [&] {
        struct RestoreThreads {
          int threads;
          ~RestoreThreads() { onednn::SetThreads(threads); }
        } restore{request.threads};
        onednn::SetThreads(1);
        return describe(rows, packed);
      }();
      for (const dnnl::matmul::primitive_desc* d : {&own, &serial}) {
        if (onednn::IsReferenceImpl(onednn::ImplName(*d))) return std::nullopt;
      }
      return Product{dnnl::matmul(own), dnnl::matmul(serial),  own.src_desc(),
                     own.dst_desc(),    own.scratchpad_desc(), serial.scratchpad_desc()};
    };
    std::optional<Product> chunk = product(g->chunk), tail;
    if (const int64_t rest = g->tiles.count() % g->chunk; chunk && rest != 0) {
      tail = product(rest);
      if (!tail) chunk.reset();
    }
    if (!chunk) return NotApplicable(request, "oneDNN offers only its slow reference matmul here");
    ASSIGN_OR_RETURN(Tensor u, Tensor::AllocateUninitialized(DataType::kFloat32,
                                                             {kPositions, c_count, k_count}));
    winograd::TransformWeights(request.inputs[1]->constant.data<float>(), k_count, c_count,
                               u.data<float>());
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
