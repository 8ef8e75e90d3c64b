// GridSample (opsets 16 and 20), after onnx/reference/ops/op_grid_sample.py (which follows
// PyTorch's grid_sampler).
//
// For each output point the grid gives one normalized coordinate per spatial dimension
// (the grid's last axis lists them innermost first: x for the width, then y...). Each is
// mapped to a pixel coordinate, ((g + 1) * D - 1) / 2, or (g + 1) / 2 * (D - 1) with
// align_corners. `nearest` rounds it (half to even; half away from zero for 3-D inputs, as
// PyTorch does). Outside [-0.5, D - 0.5] ([0, D - 1] with align_corners) `border` clamps it
// into [0, D - 1] and `reflection` mirrors it at those bounds. Then `linear` (opset 16:
// `bilinear`) weighs the 2^r neighbours, `cubic` (`bicubic`) the 4^r neighbours with Keys'
// kernel (a = -0.75), and `nearest` takes one pixel; a neighbour outside the input reads 0
// with `zeros` padding, the clamped pixel with `border` and the mirrored pixel with
// `reflection`.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "runtime/reference/float_buffer.h"
#include "runtime/reference/sampling_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

enum class Interpolation { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridOptions {
  Interpolation mode = Interpolation::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

StatusOr<GridOptions> ReadOptions(const KernelArgs& args) {
  const ir::Node& node = args.node;
  GridOptions o;
  const std::string mode = node.GetString("mode", args.opset >= 20 ? "linear" : "bilinear");
  if (mode == "nearest") {
    o.mode = Interpolation::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    o.mode = Interpolation::kLinear;
  } else if (mode == "cubic" || mode == "bicubic") {
    o.mode = Interpolation::kCubic;
  } else {
    return NodeError(
        node, "mode '" + mode + "' is not one of linear (bilinear), nearest, cubic (bicubic)");
  }
  const std::string padding = node.GetString("padding_mode", "zeros");
  if (padding == "zeros") {
    o.padding = Padding::kZeros;
  } else if (padding == "border") {
    o.padding = Padding::kBorder;
  } else if (padding == "reflection") {
    o.padding = Padding::kReflection;
  } else {
    return NodeError(node,
                     "padding_mode '" + padding + "' is not one of zeros, border, reflection");
  }
  o.align_corners = node.GetInt("align_corners", 0) != 0;
  return o;
}

// Mirrors x at lo and hi until it lies in [lo, hi].
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const auto n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const auto n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

// Keys' cubic convolution weights for the neighbours at -1, 0, 1, 2 of a point t in [0, 1).
std::array<double, 4> CubicWeights(double t) {
  constexpr double a = -0.75;
  const double x = std::abs(t);
  return {((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a,
          ((a + 2) * x - (a + 3)) * x * x + 1,
          ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1,
          ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a};
}

// One spatial dimension of the input.
struct Axis {
  int64_t size;
  double lo, hi;  // the bounds of the sampled area in pixel coordinates
};

// The pixel a neighbour index reads along one axis, or -1 for a zero (zeros padding).
int64_t PixelIndex(int64_t i, const Axis& axis, Padding padding) {
  if (i >= 0 && i < axis.size) return i;
  switch (padding) {
    case Padding::kZeros:
      return -1;
    case Padding::kBorder:
      return i < 0 ? 0 : axis.size - 1;
    case Padding::kReflection:
      return std::clamp(static_cast<int64_t>(Reflect(static_cast<double>(i), axis.lo, axis.hi)),
                        int64_t{0}, axis.size - 1);
  }
  return -1;
}

// The neighbours of one coordinate along one axis: pixel index (-1: zero) and weight.
struct Taps {
  int count = 0;
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
};

Taps AxisTaps(double x, const Axis& axis, const GridOptions& o, size_t spatial_rank) {
  Taps taps;
  if (std::isnan(x)) {  // a NaN coordinate samples nothing: 0
    taps.count = 1;
    taps.index[0] = -1;
    return taps;
  }
  // Far outside is as good as infinitely far; this keeps the integer conversions defined.
  constexpr double kFar = 1e15;
  x = std::clamp(x, -kFar, kFar);
  if (o.mode == Interpolation::kNearest) {
    // PyTorch: nearbyint in 2-D, std::round in 3-D.
    x = spatial_rank == 3 ? std::round(x) : std::nearbyint(x);
  }
  if (x < axis.lo || x > axis.hi) {
    if (o.padding == Padding::kBorder) x = std::clamp(x, 0.0, static_cast<double>(axis.size - 1));
    if (o.padding == Padding::kReflection) x = Reflect(x, axis.lo, axis.hi);
  }
  if (o.mode == Interpolation::kNearest) {
    taps.count = 1;
    taps.index[0] = PixelIndex(static_cast<int64_t>(x), axis, o.padding);
    taps.weight[0] = 1.0;
    return taps;
  }
  const double floor_x = std::floor(x);
  const double t = x - floor_x;
  const auto x0 = static_cast<int64_t>(floor_x);
  if (o.mode == Interpolation::kLinear) {
    taps.count = 2;
    taps.index = {PixelIndex(x0, axis, o.padding), PixelIndex(x0 + 1, axis, o.padding)};
    taps.weight = {1.0 - t, t};
    return taps;
  }
  taps.count = 4;
  for (int k = 0; k < 4; ++k) taps.index[k] = PixelIndex(x0 - 1 + k, axis, o.padding);
  taps.weight = CubicWeights(t);
  return taps;
}

StatusOr<std::vector<Tensor>> GridSampleKernel(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 2, 2));
  const Tensor& x = args.inputs[0];
  const Tensor& grid = args.inputs[1];
  RETURN_IF_ERROR(CheckComputeFloatType(node, x, "X"));
  RETURN_IF_ERROR(CheckComputeFloatType(node, grid, "grid"));
  const size_t rank = x.rank();
  if (rank < 3 || grid.rank() != rank || grid.size(0) != x.size(0) ||
      grid.sizes().back() != static_cast<int64_t>(rank - 2)) {
    return NodeError(node, "X " + x.DebugString() + " and grid " + grid.DebugString() +
                               " must be [N, C, D1..Dr] and [N, O1..Or, r]");
  }
  ASSIGN_OR_RETURN(const GridOptions o, ReadOptions(args));
  const size_t spatial = rank - 2;
  const int64_t batch = x.size(0), channels = x.size(1);
  std::vector<Axis> axes(spatial);
  int64_t in_points = 1, out_points = 1;
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t size = x.size(d + 2);
    axes[d] = o.align_corners ? Axis{size, 0.0, static_cast<double>(size - 1)}
                              : Axis{size, -0.5, static_cast<double>(size) - 0.5};
    in_points *= size;
    out_points *= grid.size(d + 1);
  }
  if (in_points == 0 && batch * channels * out_points > 0) {
    return NodeError(node, "X " + x.DebugString() + " has an empty spatial dimension to sample");
  }
  std::vector<int64_t> out_sizes = {batch, channels};
  out_sizes.insert(out_sizes.end(), grid.sizes().begin() + 1, grid.sizes().end() - 1);

  RETURN_IF_ERROR(CheckOutputElements(
      node, static_cast<double>(batch) * static_cast<double>(channels) * out_points));
  const std::vector<double> xs = ToDoubles(x);
  const std::vector<double> gs = ToDoubles(grid);
  std::vector<double> out(static_cast<size_t>(batch * channels * out_points), 0.0);
  std::vector<int64_t> in_strides(spatial, 1);
  for (size_t d = spatial - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * axes[d].size;
  std::vector<Taps> taps(spatial);
  std::vector<int> tap(spatial);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < out_points; ++p) {
      const double* g = &gs[(n * out_points + p) * spatial];
      for (size_t d = 0; d < spatial; ++d) {
        const double normalized = g[spatial - 1 - d];
        const double size = static_cast<double>(axes[d].size);
        const double pixel =
            o.align_corners ? (normalized + 1) / 2 * (size - 1) : ((normalized + 1) * size - 1) / 2;
        taps[d] = AxisTaps(pixel, axes[d], o, spatial);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const double* plane = &xs[(n * channels + c) * in_points];
        double sum = 0;
        std::fill(tap.begin(), tap.end(), 0);
        while (true) {  // every combination of one tap per axis
          double weight = 1;
          int64_t offset = 0;
          for (size_t d = 0; d < spatial && offset >= 0; ++d) {
            const int64_t i = taps[d].index[tap[d]];
            weight *= taps[d].weight[tap[d]];
            offset = i < 0 ? -1 : offset + i * in_strides[d];
          }
          if (offset >= 0) sum += weight * plane[offset];
          size_t d = spatial;
          while (d > 0 && ++tap[d - 1] == taps[d - 1].count) tap[--d] = 0;
          if (d == 0) break;
        }
        out[(n * channels + c) * out_points + p] = sum;
      }
    }
  }
  ASSIGN_OR_RETURN(Tensor y, FromDoubles(x.dtype(), std::move(out_sizes), out));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

StatusOr<std::vector<Tensor>> GridSample(const KernelArgs& args) { return GridSampleKernel(args); }

}  // namespace qtune::runtime::reference

namespace qtune::runtime {

void RegisterSamplingKernels(ReferenceRegistry& registry) {
  registry.Register("GridSample", &reference::GridSample);
  registry.Register("RoiAlign", &reference::RoiAlign);
}

}  // namespace qtune::runtime
