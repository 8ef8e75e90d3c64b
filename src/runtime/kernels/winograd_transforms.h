// The three transforms of Winograd's F(2x2, 3x3) convolution (Lavin & Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2015) on channels-last activations:
//
//   U = G g G^T        the 3x3 kernel g of each (output, input) channel pair -> 4x4
//   V = B^T d B        each 4x4 input tile d (stride 2, one pixel of overlap) -> 4x4
//   M[xi] = V[xi] U[xi]  for the 16 positions xi (16 matrix products over channels)
//   Y = A^T M A        each 4x4 product tile -> a 2x2 output tile
//
// 2.25x fewer multiplications than the direct convolution for the price of the two
// activation transforms (adds only). Transforms work on 16 channels at a time, so the
// channel counts must be multiples of 16.
#pragma once

#include <cstdint>

namespace qtune::runtime::winograd {

inline constexpr int64_t kLanes = 16;  // channels per transform step

// Output tiles of one sample: rows and columns of 2x2 tiles.
struct Tiles {
  int64_t height = 0, width = 0;  // activation rows and columns (input = output)
  int64_t rows() const { return (height + 1) / 2; }
  int64_t columns() const { return (width + 1) / 2; }
  int64_t count() const { return rows() * columns(); }
};

// u[xi][c][k] (xi = 4 * i + j) from g [K][C][3][3].
void TransformWeights(const float* g, int64_t out_channels, int64_t in_channels, float* u);

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
