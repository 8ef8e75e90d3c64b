// Native float32 qtune::Attention (fusion/fused_ops.h) on AVX-512F CPUs. Per (batch,
// head) and block of kBlockRows query rows, the scores, their softmax and their product
// with V run while the block's scores sit in L1, where the oneDNN kernel
// (onednn_attention.cc) writes all heads' scores and reads them twice more (465 KB for a
// ViT's 3 heads of 197 queries: a quarter of the L2, evicting the weights).
//
//   1. K_h transposed into Kt [D, Tp] (Tp: T rounded up to 16 lanes), once per (batch,
//      head) a thread works on;
//   2. S [rows, T] = Q_rows Kt * scale, Q read from its [B, S, H*D] rows, each row's
//      maximum taken as its scores are stored (or as the mask is added, numpy
//      broadcasting);
//   3. S = exp(S - row maximum) in place, and the row sums (softmax_rows.h's exp);
//   4. Y_rows = S V_h / row sum, V read from its [B, T, H*D] rows, Y written into its own.
// That is flash attention's order of the softmax: the scores are read once after they are
// written. Both products run in tiles of 6 rows x up to 64 columns (24 zmm accumulators,
// the row's value broadcast, 4 vectors of the right operand loaded per step), column band
// by column band, so that a band of the right operand stays in cache across the block's
// row tiles. The (batch, head, block) items split statically over the threads; each
// thread has its own Kt and score block. Measured (bench/kernels/attention_bench, medians
// of 5, Intel Xeon): a ViT's 3 heads of 197 in 0.225-0.229 ms where the oneDNN kernel
// takes 0.232-0.246 at 1 thread, 0.123-0.142 against 0.137-0.148 at 2; a BERT layer's 12
// heads of 128 the same (docs/performance.md).
#include <omp.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/attention_geometry.h"
#include "runtime/kernels/avx512_util.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/softmax_rows.h"

namespace qtune::runtime {
namespace {

#ifdef QTUNE_AVX512F_PATHS
constexpr int kTileRows = 6;
constexpr int kTileVectors = 4;
constexpr int64_t kBlockRows = 4 * kTileRows;

// out[r, c] = scale_r * sum_k a[r, k] b[k, c] for r < MR, c < 16 * NV, with a's rows
// a_stride apart, b's rows b_stride apart, out's rows out_stride apart; lanes of the last
// vector outside `last` are neither loaded from b nor stored. scale_r is row_scale[r], or
// `scale` when row_scale is null. With row_max, row_max[r] becomes the maximum of itself
// and the row's stored values.
struct Tile {
  const float* a;
  int64_t a_stride;
  const float* b;
  int64_t b_stride;
  int64_t depth;
  float* out;
  int64_t out_stride;
  __mmask16 last;
  float scale;
  const float* row_scale;
  float* row_max;
};

template <int MR, int NV>
QTUNE_AVX512F void ProductTile(const Tile& t) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  const float* b = t.b;
  for (int64_t k = 0; k < t.depth; ++k, b += t.b_stride) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) bv[v] = _mm512_loadu_ps(b + 16 * v);
    bv[NV - 1] = _mm512_maskz_loadu_ps(t.last, b + 16 * (NV - 1));
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(t.a[r * t.a_stride + k]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* out = t.out + r * t.out_stride;
    const float row_scale = t.row_scale != nullptr ? t.row_scale[r] : t.scale;
    const __m512 scale = _mm512_set1_ps(row_scale);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      if (row_scale != 1.0f) acc[r][v] = _mm512_mul_ps(acc[r][v], scale);
      _mm512_mask_storeu_ps(out + 16 * v, v + 1 < NV ? static_cast<__mmask16>(0xFFFF) : t.last,
                            acc[r][v]);
    }
    if (t.row_max != nullptr) {
      __m512 max = _mm512_mask_blend_ps(t.last, _mm512_set1_ps(t.row_max[r]), acc[r][NV - 1]);
#pragma GCC unroll 4
      for (int v = 0; v + 1 < NV; ++v) max = _mm512_max_ps(max, acc[r][v]);
      t.row_max[r] = _mm512_reduce_max_ps(max);
    }
  }
}

using TileFn = void (*)(const Tile&);

template <int MR>
constexpr std::array<TileFn, kTileVectors> TilesOfRows() {
  return {&ProductTile<MR, 1>, &ProductTile<MR, 2>, &ProductTile<MR, 3>, &ProductTile<MR, 4>};
}

constexpr std::array<std::array<TileFn, kTileVectors>, kTileRows> kTiles = {
    TilesOfRows<1>(), TilesOfRows<2>(), TilesOfRows<3>(),
    TilesOfRows<4>(), TilesOfRows<5>(), TilesOfRows<6>()};

// out [rows, columns] = scale_r * a [rows, depth] b [depth, columns], strides, scales and
// maxima as in Tile (row_scale and row_max index the block's rows); column band by column
// band, so that a band of b stays in cache over the row tiles.
QTUNE_AVX512F void BlockProduct(const float* a, int64_t a_stride, const float* b, int64_t b_stride,
                                int64_t depth, float* out, int64_t out_stride, int64_t rows,
                                int64_t columns, float scale, const float* row_scale,
                                float* row_max) {
  // The columns' vectors spread evenly over the bands (197 columns: 4, 3, 3, 3 vectors,
  // not 4, 4, 4, 1: a narrow tile waits on its row broadcasts).
  const int64_t total_vectors = (columns + 15) / 16;
  const int64_t bands = (total_vectors + kTileVectors - 1) / kTileVectors;
  for (int64_t band = 0, c = 0; band < bands; ++band) {
    const int64_t vectors = total_vectors / bands + (band < total_vectors % bands ? 1 : 0);
    const int64_t width = std::min(16 * vectors, columns - c);
    const __mmask16 last = TailMask16(width - 16 * (vectors - 1));
    // The rows spread evenly over the tiles too (8 rows: 4 + 4, not 6 + 2).
    const int64_t tiles = (rows + kTileRows - 1) / kTileRows;
    for (int64_t tile_index = 0, r = 0; tile_index < tiles; ++tile_index) {
      const int64_t tile_rows = rows / tiles + (tile_index < rows % tiles ? 1 : 0);
      const Tile tile{a + r * a_stride,
                      a_stride,
                      b + c,
                      b_stride,
                      depth,
                      out + r * out_stride + c,
                      out_stride,
                      last,
                      scale,
                      row_scale != nullptr ? row_scale + r : nullptr,
                      row_max != nullptr ? row_max + r : nullptr};
      kTiles[tile_rows - 1][vectors - 1](tile);
      r += tile_rows;
    }
    c += width;
  }
}

// The 16 x 16 block of rows r[0..15] becomes its transpose (unpacks within 128-bit lanes,
// then 128-bit lanes exchanged twice).
QTUNE_AVX512F inline void Transpose16x16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

// What one thread works in: K_h transposed, the (batch, head) it holds, a block of scores.
struct ThreadScratch {
  Tensor kt;      // [D, padded keys]
  Tensor scores;  // [kBlockRows, T]
  int64_t packed_head = -1;
  std::array<float, kBlockRows> row_max, row_scale;
};

int64_t PaddedKeys(const AttentionGeometry& g) { return (g.t + 15) / 16 * 16; }

class NativeAttentionKernel final : public Kernel {
 public:
  // scratch: one per thread.
  NativeAttentionKernel(AttentionGeometry g, std::vector<ThreadScratch> scratch)
      : g_(std::move(g)),
        threads_(static_cast<int>(scratch.size())),
        padded_keys_(PaddedKeys(g_)),
        blocks_((g_.s + kBlockRows - 1) / kBlockRows),
        scratch_(std::move(scratch)) {}

  std::string Describe() const override { return "native:attention:avx512"; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* q = inputs[0].data<float>();
    const float* k = inputs[1].data<float>();
    const float* v = inputs[2].data<float>();
    const float* mask = g_.has_mask ? inputs[3].data<float>() : nullptr;
    float* y = outputs[0].data<float>();
    for (ThreadScratch& s : scratch_) s.packed_head = -1;
    // A static split: a thread's items are consecutive and mostly share their head.
    const int64_t items = g_.b * g_.h * blocks_;
    if (threads_ <= 1 || items <= 1) {
      for (int64_t item = 0; item < items; ++item) RunBlock(item, q, k, v, mask, y, scratch_[0]);
    } else {
#pragma omp parallel for num_threads(threads_) schedule(static)
      for (int64_t item = 0; item < items; ++item) {
        RunBlock(item, q, k, v, mask, y, scratch_[omp_get_thread_num()]);
      }
    }
    return Status::Ok();
  }

 private:
  QTUNE_AVX512F void RunBlock(int64_t item, const float* q, const float* k, const float* v,
                              const float* mask, float* y, ThreadScratch& scratch) const {
    const int64_t hd = g_.hidden(), head_index = item / blocks_;
    const int64_t b = head_index / g_.h, h = head_index % g_.h;
    const int64_t first_row = item % blocks_ * kBlockRows;
    const int64_t rows = std::min(kBlockRows, g_.s - first_row);
    if (scratch.packed_head != head_index) {
      PackKeys(k + b * g_.t * hd + h * g_.d, scratch.kt.data<float>());
      scratch.packed_head = head_index;
    }
    // Softmax as flash attention does it: the maxima found while the scores are stored,
    // exp(s - max) in place, and 1 / sum applied to Y's rows.
    float* scores = scratch.scores.data<float>();
    float* row_max = scratch.row_max.data();
    std::fill_n(row_max, rows, -std::numeric_limits<float>::infinity());
    BlockProduct(q + (b * g_.s + first_row) * hd + h * g_.d, hd, scratch.kt.data<float>(),
                 padded_keys_, g_.d, scores, g_.t, rows, g_.t, g_.scale, nullptr,
                 mask != nullptr ? nullptr : row_max);
    if (mask != nullptr) AddMask(mask, b, h, first_row, rows, scores, row_max);
    ExpMinusMaxRows(scores, g_.t, rows, g_.t, row_max, scratch.row_scale.data());
    BlockProduct(scores, g_.t, v + b * g_.t * hd + h * g_.d, hd, g_.t,
                 y + (b * g_.s + first_row) * hd + h * g_.d, hd, rows, g_.d, 1.0f,
                 scratch.row_scale.data(), nullptr);
  }

  // kt[d, j] = K_h[j, d] for d < D, j < T (row stride padded_keys_), in 16 x 16 blocks
  // transposed in registers; columns T .. padded_keys_ get zeros.
  QTUNE_AVX512F void PackKeys(const float* k_head, float* kt) const {
    const int64_t hd = g_.hidden();
    for (int64_t j = 0; j < g_.t; j += 16) {
      const int64_t keys = std::min<int64_t>(16, g_.t - j);
      for (int64_t d = 0; d < g_.d; d += 16) {
        const __mmask16 columns = TailMask16(g_.d - d);
        __m512 block[16];
        for (int64_t i = 0; i < 16; ++i) {
          block[i] = i < keys ? _mm512_maskz_loadu_ps(columns, k_head + (j + i) * hd + d)
                              : _mm512_setzero_ps();
        }
        Transpose16x16(block);
        const int64_t depth = std::min<int64_t>(16, g_.d - d);
        for (int64_t i = 0; i < depth; ++i) {
          _mm512_storeu_ps(kt + (d + i) * padded_keys_ + j, block[i]);
        }
      }
    }
  }

  // Adds the mask (numpy broadcasting over [B, H, S, T]) to the block's scores and finds
  // each row's maximum.
  QTUNE_AVX512F void AddMask(const float* mask, int64_t b, int64_t h, int64_t first_row,
                             int64_t rows, float* scores, float* row_max) const {
    const int64_t* st = g_.mask_strides.data();
    const __m512 minus_infinity = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t r = 0; r < rows; ++r) {
      const float* m = mask + b * st[0] + h * st[1] + (first_row + r) * st[2];
      float* row = scores + r * g_.t;
      __m512 max = minus_infinity;
      for (int64_t j = 0; j < g_.t; j += 16) {
        const __mmask16 lanes = TailMask16(g_.t - j);
        const __m512 add = st[3] == 1 ? _mm512_maskz_loadu_ps(lanes, m + j) : _mm512_set1_ps(m[0]);
        const __m512 x = _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, row + j), add);
        _mm512_mask_storeu_ps(row + j, lanes, x);
        max = _mm512_mask_max_ps(max, lanes, max, x);
      }
      row_max[r] = _mm512_reduce_max_ps(max);
    }
  }

  AttentionGeometry g_;
  int threads_;
  int64_t padded_keys_;
  int64_t blocks_;  // blocks of kBlockRows query rows per (batch, head)
  std::vector<ThreadScratch> scratch_;
};
#endif  // QTUNE_AVX512F_PATHS

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateNativeAttentionKernel(const KernelRequest& request) {
  std::optional<AttentionGeometry> geometry = AttentionGeometryOf(request);
  if (!geometry) return NotApplicable();
  if (!CpuHasAvx512F()) {
    return NotApplicable(request, "no AVX-512F on this CPU (oneDNN's attention runs)");
  }
#ifdef QTUNE_AVX512F_PATHS
  std::vector<ThreadScratch> scratch(std::max(1, request.threads));
  for (ThreadScratch& s : scratch) {
    ASSIGN_OR_RETURN(s.kt, Tensor::AllocateUninitialized(DataType::kFloat32,
                                                         {geometry->d, PaddedKeys(*geometry)}));
    ASSIGN_OR_RETURN(s.scores,
                     Tensor::AllocateUninitialized(DataType::kFloat32, {kBlockRows, geometry->t}));
  }
  KernelChoice choice;
  choice.kernel = std::make_unique<NativeAttentionKernel>(std::move(*geometry), std::move(scratch));
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  choice.output_layouts = {Layout::kPlain};
  return std::optional<KernelChoice>(std::move(choice));
#else
  return NotApplicable();
#endif
}

void RegisterNativeAttentionKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_attention",
                     .tier = KernelTier::kNative,
                     .priority = 150,  // above onednn_attention
                     .ops = {{"qtune", "Attention"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateNativeAttentionKernel});
}

}  // namespace qtune::runtime
