// F(2x2, 3x3) transforms (winograd_transforms.h). The activation transforms hold 16
// channels in one GCC vector of 16 floats: one AVX-512 register, two AVX2 ones or four SSE
// ones, in the clone the CPU picks at load time.
#include "runtime/kernels/winograd_transforms.h"

#include <algorithm>
#include <cstring>

#include "runtime/kernels/vector_clones.h"

// The default and AVX2 clones pass 64-byte vectors in memory; GCC warns that this differs
// from the AVX-512 clone's ABI. They are file-local inline helpers, always inlined.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace qtune::runtime::winograd {
namespace {

typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof(v)); }

// inside[r][q]: whether pixel (y0 + r, x0 + q) of an n x n input window lies in the image
// (outside it the input is the padding's 0).
template <int n>
inline void WindowInside(const Tiles& tiles, int64_t y0, int64_t x0, bool inside[n][n]) {
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      inside[r][q] = y0 + r >= 0 && y0 + r < tiles.height && x0 + q >= 0 && x0 + q < tiles.width;
    }
  }
}

// F(2x2, 3x3): G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
void TransformWeights2(const float* g, int64_t out_channels, int64_t in_channels, float* u) {
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

// F(2x2, 3x3): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
QTUNE_VECTOR_CLONES void TransformInput2(const float* x, const Tiles& tiles, int64_t channels,
                                         int64_t first, int64_t count, float* v, int64_t v_stride) {
  const Vec zero = {};
  for (int64_t t = 0; t < count; ++t) {
    const int64_t tile = first + t;
    const int64_t y0 = 2 * (tile / tiles.columns()) - 1, x0 = 2 * (tile % tiles.columns()) - 1;
    bool inside[4][4];
    WindowInside<4>(tiles, y0, x0, inside);
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

// F(2x2, 3x3): A^T = [1 1 1 0; 0 1 -1 -1].
QTUNE_VECTOR_CLONES void TransformOutput2(const float* m, int64_t m_stride, const Tiles& tiles,
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

// F(4x4, 3x3): G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
// 1/24 -1/12 1/6; 0 0 1].
void TransformWeights4(const float* g, int64_t out_channels, int64_t in_channels, float* u) {
  auto apply_g = [](const float w0, const float w1, const float w2, float out[6]) {
    out[0] = w0 / 4.0f;
    out[1] = -(w0 + w1 + w2) / 6.0f;
    out[2] = -(w0 - w1 + w2) / 6.0f;
    out[3] = w0 / 24.0f + w1 / 12.0f + w2 / 6.0f;
    out[4] = w0 / 24.0f - w1 / 12.0f + w2 / 6.0f;
    out[5] = w2;
  };
  for (int64_t k = 0; k < out_channels; ++k) {
    for (int64_t c = 0; c < in_channels; ++c) {
      const float* w = g + (k * in_channels + c) * 9;
      float gw[3][6];  // G applied to each column of w: gw[j][i] = (G w)[i][j]
      for (int j = 0; j < 3; ++j) apply_g(w[j], w[3 + j], w[6 + j], gw[j]);
      for (int i = 0; i < 6; ++i) {  // (G w) G^T: G on each row of G w
        float row[6];
        apply_g(gw[0][i], gw[1][i], gw[2][i], row);
        for (int j = 0; j < 6; ++j) u[((i * 6 + j) * in_channels + c) * out_channels + k] = row[j];
      }
    }
  }
}

// B^T d for one column of 6 (or, applied to rows, d B):
// B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0;
//        0 4 0 -5 0 1].
inline void InputColumn4(const Vec d[6], Vec out[6]) {
  const Vec four = Vec{} + 4.0f, five = Vec{} + 5.0f, two = Vec{} + 2.0f;
  out[0] = four * d[0] - five * d[2] + d[4];
  out[1] = d[3] + d[4] - four * (d[1] + d[2]);
  out[2] = four * (d[1] - d[2]) + d[4] - d[3];
  out[3] = two * (d[3] - d[1]) + d[4] - d[2];
  out[4] = two * (d[1] - d[3]) + d[4] - d[2];
  out[5] = four * d[1] - five * d[3] + d[5];
}

QTUNE_VECTOR_CLONES void TransformInput4(const float* x, const Tiles& tiles, int64_t channels,
                                         int64_t first, int64_t count, float* v, int64_t v_stride) {
  const Vec zero = {};
  for (int64_t t = 0; t < count; ++t) {
    const int64_t tile = first + t;
    const int64_t y0 = 4 * (tile / tiles.columns()) - 1, x0 = 4 * (tile % tiles.columns()) - 1;
    bool inside[6][6];
    WindowInside<6>(tiles, y0, x0, inside);
    for (int64_t c = 0; c < channels; c += kLanes) {
      Vec b[6][6];  // B^T d, column by column
#pragma GCC unroll 6
      for (int q = 0; q < 6; ++q) {
        Vec d[6], out[6];
#pragma GCC unroll 6
        for (int r = 0; r < 6; ++r) {
          d[r] = inside[r][q] ? Load(x + ((y0 + r) * tiles.width + x0 + q) * channels + c) : zero;
        }
        InputColumn4(d, out);
#pragma GCC unroll 6
        for (int r = 0; r < 6; ++r) b[r][q] = out[r];
      }
      float* dst = v + t * channels + c;
#pragma GCC unroll 6
      for (int r = 0; r < 6; ++r) {  // (B^T d) B: the same on each row
        Vec out[6];
        InputColumn4(b[r], out);
#pragma GCC unroll 6
        for (int q = 0; q < 6; ++q) Store(dst + (r * 6 + q) * v_stride, out[q]);
      }
    }
  }
}

// A^T m for one column of 6: A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0;
// 0 1 -1 8 -8 1].
inline void OutputColumn4(const Vec m[6], Vec out[4]) {
  const Vec two = Vec{} + 2.0f, four = Vec{} + 4.0f, eight = Vec{} + 8.0f;
  const Vec sum12 = m[1] + m[2], diff12 = m[1] - m[2];
  const Vec sum34 = m[3] + m[4], diff34 = m[3] - m[4];
  out[0] = m[0] + sum12 + sum34;
  out[1] = diff12 + two * diff34;
  out[2] = sum12 + four * sum34;
  out[3] = diff12 + eight * diff34 + m[5];
}

QTUNE_VECTOR_CLONES void TransformOutput4(const float* m, int64_t m_stride, const Tiles& tiles,
                                          int64_t out_channels, int64_t first, int64_t count,
                                          const float* bias, const float* sum, bool relu,
                                          float* y) {
  const Vec zero = {};
  for (int64_t t = 0; t < count; ++t) {
    const int64_t tile = first + t;
    const int64_t y0 = 4 * (tile / tiles.columns()), x0 = 4 * (tile % tiles.columns());
    const int64_t rows = std::min<int64_t>(4, tiles.height - y0);
    const int64_t columns = std::min<int64_t>(4, tiles.width - x0);
    for (int64_t k = 0; k < out_channels; k += kLanes) {
      const float* in = m + t * out_channels + k;
      Vec a[4][6];  // A^T m, column by column
#pragma GCC unroll 6
      for (int q = 0; q < 6; ++q) {
        Vec column[6], out[4];
#pragma GCC unroll 6
        for (int r = 0; r < 6; ++r) column[r] = Load(in + (r * 6 + q) * m_stride);
        OutputColumn4(column, out);
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) a[r][q] = out[r];
      }
      const Vec b = bias != nullptr ? Load(bias + k) : zero;
      for (int64_t r = 0; r < rows; ++r) {
        Vec out[4];
        OutputColumn4(a[r], out);
        for (int64_t q = 0; q < columns; ++q) {
          const int64_t at = ((y0 + r) * tiles.width + x0 + q) * out_channels + k;
          Vec value = out[q] + b;
          if (sum != nullptr) value += Load(sum + at);
          if (relu) value = value > zero ? value : zero;
          Store(y + at, value);
        }
      }
    }
  }
}

}  // namespace

void TransformWeights(const float* g, int64_t out_channels, int64_t in_channels, int64_t size,
                      float* u) {
  if (size == 4) return TransformWeights4(g, out_channels, in_channels, u);
  TransformWeights2(g, out_channels, in_channels, u);
}

void TransformInput(const float* x, const Tiles& tiles, int64_t channels, int64_t first,
                    int64_t count, float* v, int64_t v_stride) {
  if (tiles.size == 4) return TransformInput4(x, tiles, channels, first, count, v, v_stride);
  TransformInput2(x, tiles, channels, first, count, v, v_stride);
}

void TransformOutput(const float* m, int64_t m_stride, const Tiles& tiles, int64_t out_channels,
                     int64_t first, int64_t count, const float* bias, const float* sum, bool relu,
                     float* y) {
  if (tiles.size == 4) {
    return TransformOutput4(m, m_stride, tiles, out_channels, first, count, bias, sum, relu, y);
  }
  TransformOutput2(m, m_stride, tiles, out_channels, first, count, bias, sum, relu, y);
}

}  // namespace qtune::runtime::winograd
