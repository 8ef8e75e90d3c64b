// GeluErf (gelu_erf.h): the piecewise polynomial of erf(a / sqrt(2)), its scalar and
// AVX-512 loops, and the split over threads.
#include "runtime/kernels/gelu_erf.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/avx512_util.h"
#include "runtime/kernels/parallel_rows.h"

namespace qtune::runtime {
namespace {

constexpr int kDegree = 5;
constexpr float kEnd = 5.5f;                     // E(a) = 1 from here on
constexpr float kWidth = 0.366666666667f;        // kEnd / 15
constexpr float kInverseWidth = 2.72727272727f;  // 15 / kEnd
constexpr float kLastPiece = 15.0f;              // the constant piece [kEnd, inf)
// kPieces[k][i]: coefficient of t^k on piece i, E(i * kWidth + t) for t in [0, kWidth);
// piece 15 is the constant 1.
alignas(64) constexpr float kPieces[kDegree + 1][16] = {
    {2.98677275e-9f, 0.286132334f, 0.536644857f, 0.728667879f, 0.857533243f, 0.933246982f,
     0.972193103f, 0.989731873f, 0.996646564f, 0.999033152f, 0.999754267f, 0.999945009f,
     0.999989175f, 0.999998127f, 0.999999715f, 1.0f},
    {0.797883977f, 0.746010571f, 0.609764668f, 0.435704101f, 0.272165453f, 0.148622956f,
     0.0709495529f, 0.0296089747f, 0.0108020416f, 0.00344505134f, 0.000960486696f, 0.000234094423f,
     4.98761543e-5f, 9.28955801e-6f, 1.51249964e-6f, 0.0f},
    {1.81473567e-5f, -0.136723088f, -0.223542844f, -0.239629009f, -0.19960303f, -0.136257186f,
     -0.0780558955f, -0.0380005019f, -0.0158408692f, -0.00568171816f, -0.00175924325f,
     -0.000471344795f, -0.000109463793f, -2.20643628e-5f, -3.86405927e-6f, 0.0f},
    {-0.133181512f, -0.108148767f, -0.0474217921f, 0.0151443733f, 0.0523905421f, 0.0587197469f,
     0.0455472688f, 0.027604607f, 0.013665337f, 0.00564649192f, 0.00197159966f, 0.000586301722f,
     0.000149269592f, 3.26584454e-5f, 6.15740143e-6f, 0.0f},
    {0.000950241817f, 0.0354116452f, 0.04828042f, 0.0363773847f, 0.0132380568f, -0.00533770159f,
     -0.0127278733f, -0.0115375289f, -0.00727234634f, -0.00356671274f, -0.00142135932f,
     -0.000470424154f, -0.000130981223f, -3.09364757e-5f, -6.2340065e-6f, 0.0f},
    {0.0181979214f, 0.00727740602f, -0.00576718781f, -0.012087129f, -0.0100614513f, -0.00424397643f,
     0.000431926562f, 0.00222737294f, 0.00201519106f, 0.00119556357f, 0.000540547665f,
     0.000196407012f, 5.885325e-5f, 1.4761922e-5f, 3.12902754e-6f, 0.0f}};

inline float GeluScalar(float x) {
  const float a = std::fabs(x);
  const float clamped = a < kEnd ? a : kEnd;  // NaN -> kEnd; x keeps the NaN
  const float piece = std::min(std::floor(clamped * kInverseWidth), kLastPiece);
  const int i = static_cast<int>(piece);
  const float t = clamped - piece * kWidth;
  float e = kPieces[kDegree][i];
  for (int k = kDegree - 1; k >= 0; --k) e = e * t + kPieces[k][i];
  return 0.5f * (x + a * e);
}

void GeluScalarLoop(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = GeluScalar(x[i]);
}

#ifdef QTUNE_AVX512F_PATHS
QTUNE_AVX512F inline __m512 Gelu512(__m512 x) {
  const __m512 a = _mm512_abs_ps(x);
  const __m512 clamped = _mm512_min_ps(a, _mm512_set1_ps(kEnd));  // NaN -> kEnd
  const __m512 piece =
      _mm512_min_ps(_mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(kInverseWidth)),
                                         _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC),
                    _mm512_set1_ps(kLastPiece));
  const __m512i i = _mm512_cvttps_epi32(piece);
  const __m512 t = _mm512_fnmadd_ps(piece, _mm512_set1_ps(kWidth), clamped);
  __m512 e = _mm512_permutexvar_ps(i, _mm512_load_ps(kPieces[kDegree]));
  for (int k = kDegree - 1; k >= 0; --k) {
    e = _mm512_fmadd_ps(e, t, _mm512_permutexvar_ps(i, _mm512_load_ps(kPieces[k])));
  }
  return _mm512_mul_ps(_mm512_set1_ps(0.5f), _mm512_fmadd_ps(a, e, x));
}

QTUNE_AVX512F void GeluAvx512Loop(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, Gelu512(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 tail = TailMask16(n - i);
    _mm512_mask_storeu_ps(y + i, tail, Gelu512(_mm512_maskz_loadu_ps(tail, x + i)));
  }
}
#endif

}  // namespace

bool GeluErfUseAvx512() { return CpuHasAvx512F(); }

void GeluErf(const float* x, float* y, int64_t n, int threads, GeluPath path) {
  if (n <= 0) return;
  void (*loop)(const float*, float*, int64_t) = &GeluScalarLoop;
#ifdef QTUNE_AVX512F_PATHS
  if (path == GeluPath::kAuto && GeluErfUseAvx512()) loop = &GeluAvx512Loop;
#endif
  ForRowPieces(n, 1, threads,
               [&](int64_t first, int64_t end) { loop(x + first, y + first, end - first); });
}

}  // namespace qtune::runtime
