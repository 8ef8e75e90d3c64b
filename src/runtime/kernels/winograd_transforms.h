// The three transforms of Winograd's F(m x m, 3x3) convolution, m = 2 or 4 (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2015), on channels-last activations;
// with n = m + 2:
//
//   U = G g G^T        the 3x3 kernel g of each (output, input) channel pair -> n x n
//   V = B^T d B        each n x n input tile d (stride m, two pixels of overlap) -> n x n
//   M[xi] = V[xi] U[xi]  for the n*n positions xi (n*n matrix products over channels)
//   Y = A^T M A        each n x n product tile -> an m x m output tile
//
// F(2x2, 3x3) does 2.25x fewer multiplications than the direct convolution, F(4x4, 3x3)
// 4x fewer, for the price of the activation transforms and, for m = 4, a larger rounding
// error (its transforms scale by up to 8 and 1/24; relative differences around 1e-5
// against 1e-6). Transforms work on 16 channels at a time, so the channel counts must be
// multiples of 16.
#pragma once

#include <cstdint>

namespace qtune::runtime::winograd {

inline constexpr int64_t kLanes = 16;  // channels per transform step

// Output tiles of one sample: rows and columns of m x m tiles.
struct Tiles {
  int64_t height = 0, width = 0;  // activation rows and columns (input = output)
  int64_t size = 2;               // m: 2 or 4
  int64_t rows() const { return (height + size - 1) / size; }
  int64_t columns() const { return (width + size - 1) / size; }
  int64_t count() const { return rows() * columns(); }
  int64_t positions() const { return (size + 2) * (size + 2); }
};

// u[xi][c][k] (xi = n * i + j) from g [K][C][3][3], for tiles of `size` m.
void TransformWeights(const float* g, int64_t out_channels, int64_t in_channels, int64_t size,
                      float* u);

// v[xi * v_stride + t * C + c] for tiles first .. first+count-1 of sample x [H, W, C]
// (pixels outside x are 0: the convolution's one-pixel padding).
void TransformInput(const float* x, const Tiles& tiles, int64_t channels, int64_t first,
                    int64_t count, float* v, int64_t v_stride);

// Output tiles first .. first+count-1 of sample y [H, W, K] from
// m[xi * m_stride + t * K + k]: y = A^T m A + bias (+ sum, the same layout as y, which y
// may be), then max(y, 0) when `relu`. bias may be null.
void TransformOutput(const float* m, int64_t m_stride, const Tiles& tiles, int64_t out_channels,
                     int64_t first, int64_t count, const float* bias, const float* sum, bool relu,
                     float* y);

}  // namespace qtune::runtime::winograd
