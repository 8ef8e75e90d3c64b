// Windowed pools over the spatial dimensions of an [N, C, spatial...] tensor: MaxPool (with
// the optional Indices output), AveragePool and LpPool; and their Global forms, whose
// window is the whole spatial extent. Max and average pools also take uint8/int8.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "core/quant_math.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

struct PoolShape {
  int64_t planes = 0;  // N * C
  WindowGeometry window;
  std::vector<int64_t> y_sizes;
};

StatusOr<PoolShape> InferPoolShape(const ir::Node& node, const Tensor& x, bool global) {
  if (x.rank() < 3) {
    return NodeInvalid(node,
                       "input X is " + x.DebugString() + "; expected rank >= 3 (N, C, spatial...)");
  }
  PoolShape s;
  s.planes = x.size(0) * x.size(1);
  std::vector<int64_t> input(x.sizes().begin() + 2, x.sizes().end());
  if (global) {
    const size_t rank = input.size();
    s.window = WindowGeometry{.input = input,
                              .kernel = input,
                              .strides = std::vector<int64_t>(rank, 1),
                              .dilations = std::vector<int64_t>(rank, 1),
                              .pads_begin = std::vector<int64_t>(rank, 0),
                              .pads_end = std::vector<int64_t>(rank, 0),
                              .output = std::vector<int64_t>(rank, 1)};
  } else {
    if (!node.HasAttribute("kernel_shape")) {
      return NodeInvalid(node, "required attribute kernel_shape is missing");
    }
    std::vector<int64_t> kernel = node.GetInts("kernel_shape", {});
    WindowOptions options{.ceil_mode = node.GetInt("ceil_mode", 0) != 0};
    ASSIGN_OR_RETURN(s.window,
                     ComputeWindowGeometry(node, std::move(input), std::move(kernel), options));
  }
  s.y_sizes = {x.size(0), x.size(1)};
  s.y_sizes.insert(s.y_sizes.end(), s.window.output.begin(), s.window.output.end());
  return s;
}

// Calls fn(plane, window, o, y_index) for every output element; `plane` is the index of
// the (n, c) input plane, `o` the spatial output offset.
template <typename Fn>
void ForEachWindow(const PoolShape& s, Fn&& fn) {
  const int64_t out_spatial = Product(s.window.output);
  std::vector<int64_t> out_index(s.window.output.size(), 0);
  Window window;
  for (int64_t o = 0; o < out_spatial; ++o, NextIndex(out_index, s.window.output)) {
    ComputeWindow(s.window, out_index, &window);
    for (int64_t plane = 0; plane < s.planes; ++plane) {
      fn(plane, window, plane * out_spatial + o);
    }
  }
}

// Offset of row-major spatial offset `offset` in column-major order (storage_order 1).
int64_t ColumnMajorOffset(int64_t offset, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> index(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    index[i] = offset % sizes[i];
    offset /= sizes[i];
  }
  int64_t result = 0;
  int64_t stride = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    result += index[i] * stride;
    stride *= sizes[i];
  }
  return result;
}

template <typename T>
void RunMaxPool(const PoolShape& s, const Tensor& x, bool column_major, Tensor& y,
                Tensor* indices) {
  const int64_t in_spatial = Product(s.window.input);
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  ForEachWindow(s, [&](int64_t plane, const Window& window, int64_t yi) {
    const T* x_plane = xd + plane * in_spatial;
    T best = std::numeric_limits<T>::lowest();
    if constexpr (std::numeric_limits<T>::has_infinity) best = -std::numeric_limits<T>::infinity();
    int64_t best_offset = -1;
    for (const WindowTap& tap : window.taps) {
      T v = x_plane[tap.input_offset];
      // The first maximum wins; a NaN anywhere in the window wins (as numpy's max and
      // PyTorch's max_pool2d; ONNX Runtime's MLAS pooling drops it), its first one.
      if (best_offset < 0 || v > best || (v != v && best == best)) {
        best = v;
        best_offset = tap.input_offset;
      }
    }
    yd[yi] = best;
    if (indices != nullptr) {
      int64_t offset = best_offset < 0 ? 0
                       : column_major  ? ColumnMajorOffset(best_offset, s.window.input)
                                       : best_offset;
      indices->data<int64_t>()[yi] = plane * in_spatial + offset;
    }
  });
}

template <typename T>
void RunAveragePool(const PoolShape& s, const Tensor& x, bool count_include_pad, Tensor& y) {
  const int64_t in_spatial = Product(s.window.input);
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  ForEachWindow(s, [&](int64_t plane, const Window& window, int64_t yi) {
    double sum = 0;
    for (const WindowTap& tap : window.taps) sum += xd[plane * in_spatial + tap.input_offset];
    int64_t count =
        count_include_pad ? window.padded_count : static_cast<int64_t>(window.taps.size());
    yd[yi] = static_cast<T>(count > 0 ? sum / static_cast<double>(count) : 0.0);
  });
}

// AveragePool of uint8/int8 (the QDQ fusion's pass-through pools). With the pair's scale
// and zero point (`qdq`, fusion/quant_ops.h kPoolScaleAttribute): what DQ -> float pool -> Q
// computes on this tier, bit for bit. Without them: the exact integer sum, times the float
// reciprocal of the count, rounded half to even and saturated to T (oneDNN's int8 pooling).
struct QdqPair {
  float scale = 0;
  int32_t zero_point = 0;
};
template <typename T>
void RunIntegerAveragePool(const PoolShape& s, const Tensor& x, bool count_include_pad,
                           std::optional<QdqPair> qdq, Tensor& y) {
  const int64_t in_spatial = Product(s.window.input);
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  ForEachWindow(s, [&](int64_t plane, const Window& window, int64_t yi) {
    if (qdq) {  // as RunAveragePool<float> over DequantizeFromInt, then QuantizeToInt
      double sum = 0;
      for (const WindowTap& tap : window.taps) {
        sum += DequantizeFromInt(xd[plane * in_spatial + tap.input_offset], qdq->scale,
                                 qdq->zero_point);
      }
      int64_t count =
          count_include_pad ? window.padded_count : static_cast<int64_t>(window.taps.size());
      const float mean = static_cast<float>(count > 0 ? sum / static_cast<double>(count) : 0.0);
      yd[yi] = QuantizeToInt<T>(mean, qdq->scale, qdq->zero_point);
      return;
    }
    int64_t sum = 0;
    for (const WindowTap& tap : window.taps) sum += xd[plane * in_spatial + tap.input_offset];
    int64_t count =
        count_include_pad ? window.padded_count : static_cast<int64_t>(window.taps.size());
    float mean = count > 0 ? static_cast<float>(sum) * (1.0f / static_cast<float>(count)) : 0.0f;
    mean = std::clamp(std::nearbyint(mean), static_cast<float>(std::numeric_limits<T>::min()),
                      static_cast<float>(std::numeric_limits<T>::max()));
    yd[yi] = static_cast<T>(mean);
  });
}

template <typename T>
void RunLpPool(const PoolShape& s, const Tensor& x, double p, Tensor& y) {
  const int64_t in_spatial = Product(s.window.input);
  const T* xd = x.data<T>();
  T* yd = y.data<T>();
  ForEachWindow(s, [&](int64_t plane, const Window& window, int64_t yi) {
    double sum = 0;
    for (const WindowTap& tap : window.taps) {
      sum += std::pow(std::fabs(static_cast<double>(xd[plane * in_spatial + tap.input_offset])), p);
    }
    yd[yi] = static_cast<T>(std::pow(sum, 1.0 / p));
  });
}

enum class PoolKind { kMax, kAverage, kLp };

KernelResult Pool(const KernelArgs& args, PoolKind kind, bool global) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  const bool small_ints = x->dtype() == DataType::kInt8 || x->dtype() == DataType::kUint8;
  if (!(kind != PoolKind::kLp && small_ints)) RETURN_IF_ERROR(CheckFloatType(node, *x, "X"));
  ASSIGN_OR_RETURN(PoolShape s, InferPoolShape(node, *x, global));
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), s.y_sizes));
  std::vector<Tensor> outputs = {y};
  const bool is_double = x->dtype() == DataType::kFloat64;
  switch (kind) {
    case PoolKind::kMax: {
      Tensor indices;
      if (!global && OutputRequested(node, 1)) {
        ASSIGN_OR_RETURN(indices, Tensor::Allocate(DataType::kInt64, s.y_sizes));
      }
      Tensor* indices_ptr = indices.is_valid() ? &indices : nullptr;
      const bool column_major = node.GetInt("storage_order", 0) != 0;
      if (is_double)
        RunMaxPool<double>(s, *x, column_major, y, indices_ptr);
      else if (x->dtype() == DataType::kInt8)
        RunMaxPool<int8_t>(s, *x, column_major, y, indices_ptr);
      else if (x->dtype() == DataType::kUint8)
        RunMaxPool<uint8_t>(s, *x, column_major, y, indices_ptr);
      else
        RunMaxPool<float>(s, *x, column_major, y, indices_ptr);
      if (node.num_outputs() > 1) outputs.push_back(indices);
      break;
    }
    case PoolKind::kAverage: {
      const bool include_pad = !global && node.GetInt("count_include_pad", 0) != 0;
      std::optional<QdqPair> qdq;
      if (node.FindAttribute(kPoolScaleAttribute) != nullptr) {
        qdq = QdqPair{node.GetFloat(kPoolScaleAttribute, 0),
                      static_cast<int32_t>(node.GetInt(kPoolZeroPointAttribute, 0))};
      }
      if (is_double)
        RunAveragePool<double>(s, *x, include_pad, y);
      else if (x->dtype() == DataType::kInt8)
        RunIntegerAveragePool<int8_t>(s, *x, include_pad, qdq, y);
      else if (x->dtype() == DataType::kUint8)
        RunIntegerAveragePool<uint8_t>(s, *x, include_pad, qdq, y);
      else
        RunAveragePool<float>(s, *x, include_pad, y);
      break;
    }
    case PoolKind::kLp: {
      // p is an int since opset 2, a float before.
      const double p =
          static_cast<double>(node.GetInt("p", static_cast<int64_t>(node.GetFloat("p", 2))));
      if (p <= 0) return NodeInvalid(node, "attribute p must be positive");
      if (is_double)
        RunLpPool<double>(s, *x, p, y);
      else
        RunLpPool<float>(s, *x, p, y);
      break;
    }
  }
  return outputs;
}

}  // namespace

KernelResult MaxPool(const KernelArgs& args) { return Pool(args, PoolKind::kMax, false); }
KernelResult AveragePool(const KernelArgs& args) { return Pool(args, PoolKind::kAverage, false); }
KernelResult LpPool(const KernelArgs& args) { return Pool(args, PoolKind::kLp, false); }
KernelResult GlobalMaxPool(const KernelArgs& args) { return Pool(args, PoolKind::kMax, true); }
KernelResult GlobalAveragePool(const KernelArgs& args) {
  return Pool(args, PoolKind::kAverage, true);
}
KernelResult GlobalLpPool(const KernelArgs& args) { return Pool(args, PoolKind::kLp, true); }

}  // namespace qtune::runtime::nn
