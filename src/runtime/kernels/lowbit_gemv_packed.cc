#include "runtime/kernels/lowbit_gemv_packed.h"

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
constexpr int64_t kParamFloats = 2 * kLowBitBlock;  // scales then offsets, per K block

#define QTUNE_LOWBIT_AVX512 __attribute__((target("avx512f")))
#define QTUNE_LOWBIT_AVX2 __attribute__((target("avx2,fma")))

int64_t RoundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// One block's bias (kLowBitBlock floats), zero-padded past the last column.
const float* BlockBias(const float* bias, int64_t first, int64_t cols, float* padded) {
  if (bias == nullptr) return nullptr;
  if (cols == kLowBitBlock) return bias + first;
  std::fill(padded, padded + kLowBitBlock, 0.0f);
  std::copy(bias + first, bias + first + cols, padded);
  return padded;
}

// out[r * ldo + c] for rows r < MR and the block's 64 columns c.
template <int MR, int BITS>
QTUNE_LOWBIT_AVX512 void Block512(const uint8_t* codes, const float* params, int64_t k,
                                  int64_t qblock, const float* x, int64_t ldx, const float* bias,
                                  bool relu, float* out, int64_t ldo) {
  constexpr int V = kLowBitBlock / 16;
  constexpr int64_t kRow = kLowBitBlock * BITS / 8;
  __m512 acc[MR][V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    const __m512 b = bias != nullptr ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) acc[r][v] = b;
  }
  const __m512i nibble = _mm512_set1_epi32(0xF);
  for (int64_t k0 = 0; k0 < k; k0 += qblock, params += kParamFloats) {
    __m512 s[V], o[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      s[v] = _mm512_loadu_ps(params + 16 * v);
      o[v] = _mm512_loadu_ps(params + kLowBitBlock + 16 * v);
    }
    const int64_t k1 = std::min(k, k0 + qblock);
    // One row: sum x * code over the block, then scale it and add offset * sum x once
    // per block (one FMA per 16 weights fewer than dequantizing every code).
    __m512 block_acc[V];
    float x_sum = 0.0f;
    if constexpr (MR == 1) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) block_acc[v] = _mm512_setzero_ps();
    }
    for (int64_t kk = k0; kk < k1; ++kk, codes += kRow) {
      __m512i q[V];
      if constexpr (BITS == 4) {
        const __m512i a =
            _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(codes)));
        const __m512i b =
            _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(codes + 16)));
        q[0] = _mm512_and_si512(a, nibble);
        q[1] = _mm512_srli_epi32(a, 4);
        q[2] = _mm512_and_si512(b, nibble);
        q[3] = _mm512_srli_epi32(b, 4);
      } else {
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
          q[v] = _mm512_cvtepu8_epi32(
              _mm_load_si128(reinterpret_cast<const __m128i*>(codes + 16 * v)));
        }
      }
      if constexpr (MR == 1) {
        const __m512 xv = _mm512_set1_ps(x[kk]);
        x_sum += x[kk];
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
          block_acc[v] = _mm512_fmadd_ps(xv, _mm512_cvtepi32_ps(q[v]), block_acc[v]);
        }
      } else {
        __m512 w[V];
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) w[v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(q[v]), s[v], o[v]);
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          const __m512 xv = _mm512_set1_ps(x[r * ldx + kk]);
#pragma GCC unroll 8
          for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(xv, w[v], acc[r][v]);
        }
      }
    }
    if constexpr (MR == 1) {
      const __m512 xs = _mm512_set1_ps(x_sum);
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        acc[0][v] = _mm512_fmadd_ps(s[v], block_acc[v], _mm512_fmadd_ps(o[v], xs, acc[0][v]));
      }
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

QTUNE_LOWBIT_AVX2 inline __m256 Dequantized256(__m256i q, const float* s, const float* o) {
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), _mm256_loadu_ps(s), _mm256_loadu_ps(o));
}

// One row; the parameters stay in memory (AVX2 has 16 registers).
template <int BITS>
QTUNE_LOWBIT_AVX2 void Block256(const uint8_t* codes, const float* params, int64_t k,
                                int64_t qblock, const float* x, const float* bias, bool relu,
                                float* out) {
  constexpr int V = kLowBitBlock / 8;
  constexpr int64_t kRow = kLowBitBlock * BITS / 8;
  __m256 acc[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    acc[v] = bias != nullptr ? _mm256_loadu_ps(bias + 8 * v) : _mm256_setzero_ps();
  }
  const __m256i nibble = _mm256_set1_epi32(0xF);
  for (int64_t k0 = 0; k0 < k; k0 += qblock, params += kParamFloats) {
    const float* s = params;
    const float* o = params + kLowBitBlock;
    const int64_t k1 = std::min(k, k0 + qblock);
    for (int64_t kk = k0; kk < k1; ++kk, codes += kRow) {
      const __m256 xv = _mm256_broadcast_ss(x + kk);
      if constexpr (BITS == 4) {
#pragma GCC unroll 8
        for (int t = 0; t < 4; ++t) {  // 8 bytes: 8 columns low, the 8 sixteen on high
          const __m256i a = _mm256_cvtepu8_epi32(
              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + 8 * t)));
          const int lo = (t / 2) * 4 + t % 2;
          acc[lo] = _mm256_fmadd_ps(
              xv, Dequantized256(_mm256_and_si256(a, nibble), s + 8 * lo, o + 8 * lo), acc[lo]);
          acc[lo + 2] = _mm256_fmadd_ps(
              xv, Dequantized256(_mm256_srli_epi32(a, 4), s + 8 * lo + 16, o + 8 * lo + 16),
              acc[lo + 2]);
        }
      } else {
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
          const __m256i q = _mm256_cvtepu8_epi32(
              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + 8 * v)));
          acc[v] = _mm256_fmadd_ps(xv, Dequantized256(q, s + 8 * v, o + 8 * v), acc[v]);
        }
      }
    }
  }
  const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    _mm256_storeu_ps(out + 8 * v, relu ? _mm256_max_ps(acc[v], zero) : acc[v]);
  }
}

template <int BITS>
void Rows512(const PackedLowBitWeights& w, const float* x, int64_t rows, const float* bias,
             bool relu, float* out, int64_t ldo, int64_t b) {
  const int64_t k = w.k(), qb = w.quant_block();
  for (int64_t r = 0; r < rows; r += 4) {
    const float* xr = x + r * k;
    float* yr = out + r * ldo;
    switch (std::min<int64_t>(rows - r, 4)) {
      case 1:
        Block512<1, BITS>(w.codes(b), w.params(b), k, qb, xr, k, bias, relu, yr, ldo);
        break;
      case 2:
        Block512<2, BITS>(w.codes(b), w.params(b), k, qb, xr, k, bias, relu, yr, ldo);
        break;
      case 3:
        Block512<3, BITS>(w.codes(b), w.params(b), k, qb, xr, k, bias, relu, yr, ldo);
        break;
      default:
        Block512<4, BITS>(w.codes(b), w.params(b), k, qb, xr, k, bias, relu, yr, ldo);
        break;
    }
  }
}

// Rows [0, rows) of column block b. A partial last block goes through a scratch of up to
// 4 rows at a time, so nothing is written past column N.
void Block(const PackedLowBitWeights& w, const float* x, int64_t rows, float* y, int64_t b,
           const GemvOptions& e) {
  const int64_t k = w.k(), n = w.n(), first = b * kLowBitBlock;
  const int64_t cols = std::min(kLowBitBlock, n - first);
  alignas(64) float padded_bias[kLowBitBlock];
  const float* bias = BlockBias(e.bias, first, cols, padded_bias);
  const bool four = w.bits() == 4;
  if (e.isa == GemvIsa::kAvx512) {
    if (cols == kLowBitBlock) {
      (four ? Rows512<4> : Rows512<8>)(w, x, rows, bias, e.relu, y + first, n, b);
      return;
    }
    alignas(64) float scratch[4 * kLowBitBlock];
    for (int64_t r = 0; r < rows; r += 4) {
      const int64_t group = std::min<int64_t>(rows - r, 4);
      (four ? Rows512<4> : Rows512<8>)(w, x + r * k, group, bias, e.relu, scratch, kLowBitBlock, b);
      for (int64_t i = 0; i < group; ++i) {
        std::copy(scratch + i * kLowBitBlock, scratch + i * kLowBitBlock + cols,
                  y + (r + i) * n + first);
      }
    }
    return;
  }
  alignas(64) float scratch[kLowBitBlock];
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * n + first;
    float* dst = cols == kLowBitBlock ? yr : scratch;
    (four ? Block256<4> : Block256<8>)(w.codes(b), w.params(b), k, w.quant_block(), x + r * k, bias,
                                       e.relu, dst);
    if (cols != kLowBitBlock) std::copy(scratch, scratch + cols, yr);
  }
}

}  // namespace

void PackedLowBitWeights::Free::operator()(uint8_t* p) const { std::free(p); }

PackedLowBitWeights::PackedLowBitWeights(int64_t k, int64_t n, int bits, int64_t block)
    : k_(k), n_(n), bits_(bits), block_(block) {
  codes_bytes_ = RoundUp(k_ * row_bytes(), 64);
  block_stride_ = codes_bytes_ + k_blocks() * kParamFloats * static_cast<int64_t>(sizeof(float));
}

StatusOr<std::unique_ptr<PackedLowBitWeights>> PackedLowBitWeights::Pack(const uint8_t* codes,
                                                                         const float* scales,
                                                                         const float* zero_points,
                                                                         int64_t k, int64_t n,
                                                                         int bits, int64_t block) {
  QTUNE_CHECK(k > 0 && n > 0 && block > 0 && (bits == 4 || bits == 8));
  std::unique_ptr<PackedLowBitWeights> packed(new PackedLowBitWeights(k, n, bits, block));
  const size_t bytes = packed->bytes();
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  const size_t size = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size);
  if (p == nullptr) {
    return ResourceExhaustedError("cannot allocate " + std::to_string(bytes >> 20) +
                                  " MiB for packed low-bit MatMul weights [" + std::to_string(k) +
                                  "," + std::to_string(n) + "]: not enough memory");
  }
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) (void)madvise(p, size, MADV_HUGEPAGE);
#endif
  packed->data_.reset(static_cast<uint8_t*>(p));
  std::memset(p, 0, size);
  const int64_t kb = packed->k_blocks(), row = packed->row_bytes();
  for (int64_t b = 0; b < packed->blocks(); ++b) {
    const int64_t first = b * kLowBitBlock, cols = std::min(kLowBitBlock, n - first);
    uint8_t* out = packed->data_.get() + b * packed->block_stride_;
    for (int64_t c = 0; c < cols; ++c) {
      const uint8_t* column = codes + (first + c) * k;
      if (bits == 8) {
        for (int64_t kk = 0; kk < k; ++kk) out[kk * row + c] = column[kk];
      } else {
        const int64_t half = c / 32, cc = c % 32;
        const int64_t byte = half * 16 + cc % 16;
        const int shift = cc >= 16 ? 4 : 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          out[kk * row + byte] |= static_cast<uint8_t>((column[kk] & 0xF) << shift);
        }
      }
    }
    float* params = reinterpret_cast<float*>(out + packed->codes_bytes_);
    for (int64_t j = 0; j < kb; ++j, params += kParamFloats) {
      for (int64_t c = 0; c < cols; ++c) {
        const float s = scales[(first + c) * kb + j];
        params[c] = s;
        params[kLowBitBlock + c] = -s * zero_points[(first + c) * kb + j];
      }
    }
  }
  return packed;
}

void RunLowBitGemv(const PackedLowBitWeights& w, const float* x, int64_t rows, float* y,
                   const GemvOptions& options) {
  ForEachColumnBlock(w.blocks(), options.threads,
                     [&](int64_t b) { Block(w, x, rows, y, b, options); });
}

}  // namespace qtune::runtime
