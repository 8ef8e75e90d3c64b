// What the fast integer elementwise kernels share (quant_elementwise.cc: QuantizeLinear /
// DequantizeLinear; quant_add.cc: qtune::QAdd): core/quant_math.h's rounding as float
// arithmetic, a chunked parallel loop, and the AVX-512 (F, BW, VL) pieces of their
// per-tensor paths.
//
// Every kernel evaluates the float expression of core/quant_math.h that the reference tier
// evaluates (division by the scale, round half to even, saturation), so both tiers agree
// bit for bit. The rounding is done by adding and subtracting 1.5 * 2^23, which is exact
// round-half-to-even (in the default rounding mode) for |x| <= 2^22; larger values are
// clamped first, which changes nothing because they saturate either way. The files that
// include this are built with -fno-trapping-math (src/runtime/CMakeLists.txt) so that
// GCC vectorizes those clamps.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "core/quant_math.h"
#include "core/tensor.h"
#include "runtime/kernels/avx512_util.h"

namespace qtune::runtime::quant_vector {

// Elements per chunk of parallel work (and the size below which one thread runs).
inline constexpr int64_t kChunkElements = int64_t{1} << 16;
inline constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23
inline constexpr float kClampBeforeRound = 65536.0f;

// saturate(round_half_to_even(x) + zero_point), x = v / scale already divided; equal to
// QuantizeToInt<Q> (a NaN gives the zero point).
template <typename Q>
inline Q RoundAndSaturate(float x, float zero_point) {
  x = x == x ? x : 0.0f;
  x = std::min(std::max(x, -kClampBeforeRound), kClampBeforeRound);
  x = (x + kRoundMagic) - kRoundMagic;
  x += zero_point;
  x = std::min(std::max(x, static_cast<float>(std::numeric_limits<Q>::min())),
               static_cast<float>(std::numeric_limits<Q>::max()));
  return static_cast<Q>(static_cast<int32_t>(x));
}

// Runs fn(begin, end) over [0, total) in pieces of `grain` on up to `threads` threads.
template <typename Fn>
void ParallelFor(int64_t total, int64_t grain, int threads, const Fn& fn) {
  grain = std::max<int64_t>(grain, 1);
  const int64_t pieces = (total + grain - 1) / grain;
  if (threads <= 0) threads = omp_get_max_threads();
  if (threads <= 1 || pieces <= 1) {
    if (total > 0) fn(0, total);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t p = 0; p < pieces; ++p) fn(p * grain, std::min(total, (p + 1) * grain));
}

// Zero point `i` of an optional zero-point tensor as int32 (0 when absent).
inline int32_t ZeroPointAt(const Tensor& zp, int64_t i) {
  if (!zp.is_valid()) return 0;
  switch (zp.dtype()) {
    case DataType::kUint8:
      return zp.data<uint8_t>()[i];
    case DataType::kInt8:
      return zp.data<int8_t>()[i];
    default:
      return zp.data<int32_t>()[i];
  }
}

// True when the AVX512BW paths below can run on this CPU.
inline bool HasAvx512BwPaths() {
#ifdef QTUNE_AVX512F_PATHS
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
#else
  return false;
#endif
}

#ifdef QTUNE_AVX512F_PATHS
#define QTUNE_AVX512BW __attribute__((target("avx512f,avx512bw,avx512vl")))

// The per-tensor paths in AVX-512 intrinsics, 16 lanes at a time with masked tails: GCC
// vectorizes the portable loops only at 256 bits, with spills. Same expressions: cvt with
// round-to-nearest-even is RoundAndSaturate's rounding, and integer zero points and bounds
// add and clamp exactly.

// RoundAndSaturate<Q> of 16 already divided values into y (lanes in `m`); NaN gives the
// zero point.
template <typename Q>
QTUNE_AVX512BW inline void StoreRounded(Q* y, __mmask16 m, __m512 v, __m512i zero_point) {
  const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-kClampBeforeRound)),
                    _mm512_set1_ps(kClampBeforeRound));
  __m512i r =
      _mm512_maskz_cvt_roundps_epi32(ordered, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm512_add_epi32(r, zero_point);
  r = _mm512_max_epi32(r, _mm512_set1_epi32(std::numeric_limits<Q>::min()));
  r = _mm512_min_epi32(r, _mm512_set1_epi32(std::numeric_limits<Q>::max()));
  _mm_mask_storeu_epi8(y, m, _mm512_cvtepi32_epi8(r));
}

// DequantizeFromInt of 16 one-byte values.
template <typename T>
QTUNE_AVX512BW inline __m512 LoadDequantized(const T* x, __mmask16 m, __m512 scale,
                                             __m512i zero_point) {
  const __m128i bytes = _mm_maskz_loadu_epi8(m, x);
  const __m512i wide =
      std::is_same_v<T, uint8_t> ? _mm512_cvtepu8_epi32(bytes) : _mm512_cvtepi8_epi32(bytes);
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(wide, zero_point)), scale);
}

// What StoreRounded needs of x / s (which the reference computes): a value that rounds to
// the same integer. x * (1/s) is within 2 ulp of the correctly rounded quotient, so it
// does, unless it lies within a few ulp of a half-integer (a possible tie, or a value
// beyond 2^20 that saturates anyway); such vectors, rare, are divided. A multiply costs a
// fraction of a divide, which dominated QuantizeLinear. `r` is 1/s (ReciprocalOf).
QTUNE_AVX512BW inline __m512 QuotientToRound(__m512 x, __m512 s, __m512 r) {
  const __m512 q = _mm512_mul_ps(x, r);
  const __m512 half = _mm512_add_ps(
      _mm512_roundscale_ps(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), _mm512_set1_ps(0.5f));
  const __m512 distance = _mm512_abs_ps(_mm512_sub_ps(q, half));
  const __m512 margin =
      _mm512_fmadd_ps(_mm512_abs_ps(q), _mm512_set1_ps(0x1p-20f), _mm512_set1_ps(0x1p-100f));
  // NaN and infinities compare false here: x * r and x / s agree on them.
  if (_mm512_cmp_ps_mask(distance, margin, _CMP_LE_OQ) != 0) return _mm512_div_ps(x, s);
  return q;
}

// 1/s, when it is finite and not denormal (else QuotientToRound would differ from x / s:
// 0 * inf); nullopt to divide every vector. (A struct: std::optional<__m512> would drop the
// vector type's alignment attribute.)
struct Reciprocal {
  __m512 r;
};

QTUNE_AVX512BW inline std::optional<Reciprocal> ReciprocalOf(float s) {
  const float r = 1.0f / s;
  if (!std::isnormal(r) || !std::isnormal(s)) return std::nullopt;
  return Reciprocal{_mm512_set1_ps(r)};
}

QTUNE_AVX512BW inline __m512 Quotient(__m512 x, __m512 s, const std::optional<Reciprocal>& r) {
  return r ? QuotientToRound(x, s, r->r) : _mm512_div_ps(x, s);
}
#endif  // QTUNE_AVX512F_PATHS

}  // namespace qtune::runtime::quant_vector
