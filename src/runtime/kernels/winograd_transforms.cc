// F(2x2, 3x3) transforms (winograd_transforms.h). The activation transforms hold 16
// channels in one GCC vector of 16 floats: one AVX-512 register, two AVX2 ones or four SSE
// ones, in the clone the CPU picks at load time.
#include "runtime/kernels/winograd_transforms.h"

#include <cstring>

// The default and AVX2 clones pass 64-byte vectors in memory; GCC warns that this differs
// from the AVX-512 clone's ABI. They are file-local inline helpers, always inlined.
#pragma GCC diagnostic ignored "-Wpsabi"

// Not under ThreadSanitizer: the clones' resolvers would run before its runtime starts.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define QTUNE_TRANSFORM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define QTUNE_TRANSFORM_CLONES
#endif

namespace qtune::runtime::winograd {
namespace {

typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof(v)); }

}  // namespace

void TransformWeights(const float* g, int64_t out_channels, int64_t in_channels, float* u) {
  for (int64_t k = 0; k < out_channels; ++k) {
    for (int64_t c = 0; c < in_channels; ++c) {
      const float* w = g + (k * in_channels + c) * 9;
      float gw[4][3];  // G w: rows w0, (w0 + w1 + w2) / 2, (w0 - w1 + w2) / 2, w2
#pragma GCC unroll 4
      for (int j = 0; j < 3; ++j) {
        gw[0][j] = w[j];
        gw[1][j] = 0.5f * (w[j] + w[3 + j] + w[6 + j]);
        gw[2][j] = 0.5f * (w[j] - w[3 + j] + w[6 + j]);
        gw[3][j] = w[6 + j];
      }
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {  // (G w) G^T: the same on the columns
        const float row[4] = {gw[i][0], 0.5f * (gw[i][0] + gw[i][1] + gw[i][2]),
                              0.5f * (gw[i][0] - gw[i][1] + gw[i][2]), gw[i][2]};
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) u[((i * 4 + j) * in_channels + c) * out_channels + k] = row[j];
      }
    }
  }
}

QTUNE_TRANSFORM_CLONES void TransformInput(const float* x, const Tiles& tiles, int64_t channels,
                                           int64_t first, int64_t count, float* v,
                                           int64_t v_stride) {
  const Vec zero = {};
  for (int64_t t = 0; t < count; ++t) {
    const int64_t tile = first + t;
    const int64_t y0 = 2 * (tile / tiles.columns()) - 1, x0 = 2 * (tile % tiles.columns()) - 1;
    bool inside[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        inside[r][q] = y0 + r >= 0 && y0 + r < tiles.height && x0 + q >= 0 && x0 + q < tiles.width;
      }
    }
    for (int64_t c = 0; c < channels; c += kLanes) {
      Vec d[4][4];
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) {
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          d[r][q] =
              inside[r][q] ? Load(x + ((y0 + r) * tiles.width + x0 + q) * channels + c) : zero;
        }
      }
      Vec b[4][4];  // B^T d: rows d0 - d2, d1 + d2, d2 - d1, d1 - d3
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        b[0][q] = d[0][q] - d[2][q];
        b[1][q] = d[1][q] + d[2][q];
        b[2][q] = d[2][q] - d[1][q];
        b[3][q] = d[1][q] - d[3][q];
      }
      float* out = v + t * channels + c;
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) {  // (B^T d) B: the same on the columns
        Store(out + (r * 4 + 0) * v_stride, b[r][0] - b[r][2]);
        Store(out + (r * 4 + 1) * v_stride, b[r][1] + b[r][2]);
        Store(out + (r * 4 + 2) * v_stride, b[r][2] - b[r][1]);
        Store(out + (r * 4 + 3) * v_stride, b[r][1] - b[r][3]);
      }
    }
  }
}

QTUNE_TRANSFORM_CLONES void TransformOutput(const float* m, int64_t m_stride, const Tiles& tiles,
                                            int64_t out_channels, int64_t first, int64_t count,
                                            const float* bias, const float* sum, bool relu,
                                            float* y) {
  const Vec zero = {};
  for (int64_t t = 0; t < count; ++t) {
    const int64_t tile = first + t;
    const int64_t y0 = 2 * (tile / tiles.columns()), x0 = 2 * (tile % tiles.columns());
    const bool row1 = y0 + 1 < tiles.height, column1 = x0 + 1 < tiles.width;
    for (int64_t k = 0; k < out_channels; k += kLanes) {
      const float* in = m + t * out_channels + k;
      Vec a[2][4];  // A^T m: rows m0 + m1 + m2, m1 - m2 - m3
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        const Vec m0 = Load(in + (0 + q) * m_stride), m1 = Load(in + (4 + q) * m_stride);
        const Vec m2 = Load(in + (8 + q) * m_stride), m3 = Load(in + (12 + q) * m_stride);
        a[0][q] = m0 + m1 + m2;
        a[1][q] = m1 - m2 - m3;
      }
      const Vec b = bias != nullptr ? Load(bias + k) : zero;
      for (int r = 0; r < (row1 ? 2 : 1); ++r) {
        const Vec out[2] = {a[r][0] + a[r][1] + a[r][2] + b, a[r][1] - a[r][2] - a[r][3] + b};
        for (int q = 0; q < (column1 ? 2 : 1); ++q) {
          const int64_t at = ((y0 + r) * tiles.width + x0 + q) * out_channels + k;
          Vec value = sum != nullptr ? out[q] + Load(sum + at) : out[q];
          if (relu) value = value > zero ? value : zero;
          Store(y + at, value);
        }
      }
    }
  }
}

}  // namespace qtune::runtime::winograd
