#include "runtime/kernels/native_gemv_packed.h"

#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/check.h"

namespace qtune::runtime {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kCacheLine = 64;

#define QTUNE_GEMV_AVX512 __attribute__((target("avx512f")))
#define QTUNE_GEMV_AVX2 __attribute__((target("avx2,fma")))

// One block's bias (kGemvBlock floats), zero-padded past the last column.
const float* BlockBias(const float* bias, int64_t first, int64_t cols, float* padded) {
  if (bias == nullptr) return nullptr;
  if (cols == kGemvBlock) return bias + first;
  std::fill(padded, padded + kGemvBlock, 0.0f);
  std::copy(bias + first, bias + first + cols, padded);
  return padded;
}

// out[r * ldo + c] = block result for rows r < MR, columns c < kGemvBlock. The fixed-count
// loops are unrolled explicitly: at -O2 GCC keeps acc[][] in memory otherwise, and the
// kernel streams at half the speed (2.5 ms against 1.3 ms for 4 x 2048x2048 on one core).
template <int MR>
QTUNE_GEMV_AVX512 void Block512(const float* w, int64_t k, const float* x, int64_t ldx,
                                const float* bias, bool relu, float* out, int64_t ldo) {
  constexpr int V = kGemvBlock / 16;
  __m512 acc[MR][V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    const __m512 b = bias != nullptr ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) acc[r][v] = b;
  }
  for (int64_t kk = 0; kk < k; ++kk, w += kGemvBlock) {
    __m512 wv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) wv[v] = _mm512_load_ps(w + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * ldx + kk]);
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(xv, wv[v], acc[r][v]);
    }
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      _mm512_storeu_ps(out + r * ldo + 16 * v, relu ? _mm512_max_ps(acc[r][v], zero) : acc[r][v]);
    }
  }
}

QTUNE_GEMV_AVX2 void Block256(const float* w, int64_t k, const float* x, const float* bias,
                              bool relu, float* out) {
  constexpr int V = kGemvBlock / 8;
  __m256 acc[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    acc[v] = bias != nullptr ? _mm256_loadu_ps(bias + 8 * v) : _mm256_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; ++kk, w += kGemvBlock) {
    const __m256 xv = _mm256_broadcast_ss(x + kk);
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) acc[v] = _mm256_fmadd_ps(xv, _mm256_load_ps(w + 8 * v), acc[v]);
  }
  const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    _mm256_storeu_ps(out + 8 * v, relu ? _mm256_max_ps(acc[v], zero) : acc[v]);
  }
}

// Rows [row, row + MR) of column block `b`. A partial last block is computed into a
// kGemvMaxRows x kGemvBlock scratch and copied, so nothing is written past column N.
template <int MR>
void RowsOfBlock512(const PackedGemvWeights& w, const float* x, float* y, int64_t b,
                    const GemvOptions& e) {
  const int64_t k = w.k(), n = w.n(), first = b * kGemvBlock;
  const int64_t cols = std::min(kGemvBlock, n - first);
  alignas(64) float padded_bias[kGemvBlock];
  const float* bias = BlockBias(e.bias, first, cols, padded_bias);
  if (cols == kGemvBlock) {
    Block512<MR>(w.block(b), k, x, k, bias, e.relu, y + first, n);
    return;
  }
  alignas(64) float scratch[kGemvMaxRows * kGemvBlock];
  Block512<MR>(w.block(b), k, x, k, bias, e.relu, scratch, kGemvBlock);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
    std::copy(scratch + r * kGemvBlock, scratch + r * kGemvBlock + cols, y + r * n + first);
}

void Block(const PackedGemvWeights& w, const float* x, int64_t rows, float* y, int64_t b,
           const GemvOptions& e) {
  const int64_t k = w.k(), n = w.n();
  if (e.isa == GemvIsa::kAvx512) {
    for (int64_t r = 0; r < rows; r += kGemvMaxRows) {
      const float* xr = x + r * k;
      float* yr = y + r * n;
      switch (std::min(rows - r, kGemvMaxRows)) {
        case 1:
          RowsOfBlock512<1>(w, xr, yr, b, e);
          break;
        case 2:
          RowsOfBlock512<2>(w, xr, yr, b, e);
          break;
        case 3:
          RowsOfBlock512<3>(w, xr, yr, b, e);
          break;
        default:
          RowsOfBlock512<4>(w, xr, yr, b, e);
          break;
      }
    }
    return;
  }
  const int64_t first = b * kGemvBlock, cols = std::min(kGemvBlock, n - first);
  alignas(64) float padded_bias[kGemvBlock];
  alignas(64) float scratch[kGemvBlock];
  const float* bias = BlockBias(e.bias, first, cols, padded_bias);
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * n + first;
    Block256(w.block(b), k, x + r * k, bias, e.relu, cols == kGemvBlock ? yr : scratch);
    if (cols != kGemvBlock) std::copy(scratch, scratch + cols, yr);
  }
}

}  // namespace

const char* GemvIsaName(GemvIsa isa) { return isa == GemvIsa::kAvx512 ? "avx512" : "avx2"; }

bool GemvIsaSupported(GemvIsa isa) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return isa == GemvIsa::kAvx512 ? avx512 : avx2;
}

std::optional<GemvIsa> BestGemvIsa() {
  if (GemvIsaSupported(GemvIsa::kAvx512)) return GemvIsa::kAvx512;
  if (GemvIsaSupported(GemvIsa::kAvx2)) return GemvIsa::kAvx2;
  return std::nullopt;
}

void PackedGemvWeights::Free::operator()(float* p) const { std::free(p); }

PackedGemvWeights::PackedGemvWeights(int64_t k, int64_t n)
    : k_(k), n_(n), blocks_((n + kGemvBlock - 1) / kGemvBlock) {}

StatusOr<std::unique_ptr<PackedGemvWeights>> PackedGemvWeights::Pack(const float* w, int64_t k,
                                                                     int64_t n, bool transposed,
                                                                     float scale) {
  QTUNE_CHECK(k > 0 && n > 0);
  std::unique_ptr<PackedGemvWeights> packed(new PackedGemvWeights(k, n));
  const int64_t blocks = packed->blocks_;
  const size_t bytes = static_cast<size_t>(blocks * k * kGemvBlock) * sizeof(float);
  // Large buffers on 2 MiB boundaries, advised onto transparent huge pages (a no-op where
  // the kernel has them off); small ones on cache lines.
  const size_t align = bytes >= kHugePage ? kHugePage : kCacheLine;
  const size_t size = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size);
  if (p == nullptr) {
    return ResourceExhaustedError("cannot allocate " + std::to_string(bytes >> 20) +
                                  " MiB for packed MatMul weights [" + std::to_string(k) + "," +
                                  std::to_string(n) + "]: not enough memory");
  }
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) packed->huge_pages_ = madvise(p, size, MADV_HUGEPAGE) == 0;
#endif
  packed->data_.reset(static_cast<float*>(p));
  float* out = packed->data_.get();
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t first = b * kGemvBlock, cols = std::min(kGemvBlock, n - first);
    for (int64_t kk = 0; kk < k; ++kk, out += kGemvBlock) {
      if (transposed) {
        for (int64_t c = 0; c < cols; ++c) out[c] = scale * w[(first + c) * k + kk];
      } else {
        const float* row = w + kk * n + first;
        for (int64_t c = 0; c < cols; ++c) out[c] = scale * row[c];
      }
      std::fill(out + cols, out + kGemvBlock, 0.0f);
    }
  }
  return packed;
}

void RunGemv(const PackedGemvWeights& w, const float* x, int64_t rows, float* y,
             const GemvOptions& options) {
  ForEachColumnBlock(w.blocks(), options.threads,
                     [&](int64_t b) { Block(w, x, rows, y, b, options); });
}

}  // namespace qtune::runtime
