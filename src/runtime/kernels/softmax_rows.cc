// Row softmax (softmax_rows.h): the portable loop, the AVX-512 loop, and the split over
// threads.
#include "runtime/kernels/softmax_rows.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "runtime/kernels/avx512_util.h"
#include "runtime/kernels/parallel_rows.h"

// The portable loop for AVX2 and baseline x86-64, picked at load time (not under
// ThreadSanitizer: the clones' resolvers would run before its runtime starts).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define QTUNE_PORTABLE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define QTUNE_PORTABLE_CLONES
#endif

namespace qtune::runtime {
namespace {

// exp(x) for x <= 0 (Cephes expf): x = n ln2 + r with |r| <= ln2 / 2, e^r by a degree-6
// polynomial, 2^n into the exponent field.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;  // ln 2 = kLn2Hi + kLn2Lo, kLn2Hi exact in 9 bits
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kUnderflow = -87.33f;       // below: 0 (e^x under FLT_MIN)
constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

// exp(x) for x <= 0 or NaN, in a form GCC vectorizes (no calls, no float -> int casts):
// the integer n is read from the low mantissa bits of x * log2e + kRoundMagic.
inline float ExpNonPositive(float x) {
  const bool underflow = x < kUnderflow;  // false for NaN, which then stays NaN
  const float v = underflow ? 0.0f : x;
  const float shifted = v * kLog2e + kRoundMagic;
  const float n = shifted - kRoundMagic;
  float r = v - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  const float e_r = p * r * r + r + 1.0f;
  // n in [-126, 0]: the low 22 bits of `shifted` hold 2^22 + n.
  const uint32_t biased =
      std::bit_cast<uint32_t>(shifted) - std::bit_cast<uint32_t>(kRoundMagic) + 127u;
  const float two_n = std::bit_cast<float>(biased << 23);
  return underflow ? 0.0f : e_r * two_n;
}

QTUNE_PORTABLE_CLONES void SoftmaxRowPortable(const float* x, float* y, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : max)
  for (int64_t i = 0; i < n; ++i) max = x[i] > max ? x[i] : max;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) {
    const float e = ExpNonPositive(x[i] - max);
    y[i] = e;
    sum += e;
  }
  const float inverse = 1.0f / sum;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] *= inverse;
}

#ifdef QTUNE_AVX512F_PATHS
// ExpNonPositive on 16 lanes; scalef does 2^n.
QTUNE_AVX512F inline __m512 Exp512(__m512 x) {
  const __m512 floor = _mm512_set1_ps(kUnderflow);
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, floor, _CMP_LT_OQ);
  x = _mm512_max_ps(floor, x);  // a NaN lane keeps x (the second operand)
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
  const __m512 e_r =
      _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(static_cast<__mmask16>(~underflow), e_r, n);
}

QTUNE_AVX512F float ExpMinusMaxAvx512(const float* x, float* y, int64_t n, float max) {
  const __m512 max_lanes = _mm512_set1_ps(max);
  __m512 sum_lanes = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask16(n - i);
    const __m512 e = Exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), max_lanes));
    _mm512_mask_storeu_ps(y + i, m, e);
    sum_lanes = _mm512_mask_add_ps(sum_lanes, m, sum_lanes, e);
  }
  return _mm512_reduce_add_ps(sum_lanes);
}

QTUNE_AVX512F void SoftmaxRowAvx512(const float* x, float* y, int64_t n) {
  const __m512 minus_infinity = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  // Four running maxima: one would chain every vmaxps on the last (4 cycles each), and the
  // next pass waits for the maximum.
  __m512 m0 = minus_infinity, m1 = minus_infinity, m2 = minus_infinity, m3 = minus_infinity;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
    m2 = _mm512_max_ps(m2, _mm512_loadu_ps(x + i + 32));
    m3 = _mm512_max_ps(m3, _mm512_loadu_ps(x + i + 48));
  }
  for (; i < n; i += 16) {
    m0 = _mm512_max_ps(m0, _mm512_mask_loadu_ps(minus_infinity, TailMask16(n - i), x + i));
  }
  const float max =
      _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
  const __m512 inverse = _mm512_set1_ps(1.0f / ExpMinusMaxAvx512(x, y, n, max));
  for (i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask16(n - i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, y + i), inverse));
  }
}

// exp(x - max) over kRows rows at once (rows `stride` apart), their 1 / sum into
// inverse_sums: the rows' exp chains interleave, and their sums reduce together.
template <int kRows>
QTUNE_AVX512F inline void ExpMinusMaxRowGroup(float* rows, int64_t stride, int64_t n,
                                              const float* max, float* inverse_sums) {
  __m512 maxima[kRows], sums[kRows];
  for (int j = 0; j < kRows; ++j) {
    maxima[j] = _mm512_set1_ps(max[j]);
    sums[j] = _mm512_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < kRows; ++j) {
      float* x = rows + j * stride + i;
      const __m512 e = Exp512(_mm512_sub_ps(_mm512_loadu_ps(x), maxima[j]));
      _mm512_storeu_ps(x, e);
      sums[j] = _mm512_add_ps(sums[j], e);
    }
  }
  if (i < n) {
    const __mmask16 m = TailMask16(n - i);
    for (int j = 0; j < kRows; ++j) {
      float* x = rows + j * stride + i;
      const __m512 e = Exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x), maxima[j]));
      _mm512_mask_storeu_ps(x, m, e);
      sums[j] = _mm512_mask_add_ps(sums[j], m, sums[j], e);
    }
  }
  for (int j = 0; j < kRows; ++j) inverse_sums[j] = 1.0f / _mm512_reduce_add_ps(sums[j]);
}
#endif

}  // namespace

bool SoftmaxRowsUseAvx512() { return CpuHasAvx512F(); }

#ifdef QTUNE_AVX512F_PATHS
QTUNE_AVX512F void ExpMinusMaxRows(float* rows, int64_t stride, int64_t count, int64_t n,
                                   const float* max, float* inverse_sums) {
  int64_t r = 0;
  for (; r + 2 <= count; r += 2) {
    ExpMinusMaxRowGroup<2>(rows + r * stride, stride, n, max + r, inverse_sums + r);
  }
  if (r < count) ExpMinusMaxRowGroup<1>(rows + r * stride, stride, n, max + r, inverse_sums + r);
}
#endif

void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t count, int threads,
                 SoftmaxPath path) {
  if (rows <= 0 || count <= 0) return;
  void (*row_fn)(const float*, float*, int64_t) = &SoftmaxRowPortable;
#ifdef QTUNE_AVX512F_PATHS
  if (path == SoftmaxPath::kAuto && CpuHasAvx512F()) row_fn = &SoftmaxRowAvx512;
#endif
  ForRowPieces(rows, count, threads, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) row_fn(x + r * count, y + r * count, count);
  });
}

}  // namespace qtune::runtime
