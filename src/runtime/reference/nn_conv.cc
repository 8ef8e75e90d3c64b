// Conv: N-D grouped, dilated, strided, padded convolution (cross-correlation, as ONNX).
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

struct ConvShape {
  int64_t batch = 0;
  int64_t channels_in = 0;
  int64_t channels_out = 0;
  int64_t group = 1;
  WindowGeometry window;
};

template <typename T>
Tensor RunConv(const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor y) {
  const int64_t in_spatial = Product(s.window.input);
  const int64_t out_spatial = Product(s.window.output);
  const int64_t kernel_size = Product(s.window.kernel);
  const int64_t c_per_group = s.channels_in / s.group;
  const int64_t m_per_group = s.channels_out / s.group;
  const T* xd = x.data<T>();
  const T* wd = w.data<T>();
  T* yd = y.data<T>();
  std::vector<int64_t> out_index(s.window.output.size(), 0);
  Window window;
  for (int64_t o = 0; o < out_spatial; ++o, NextIndex(out_index, s.window.output)) {
    ComputeWindow(s.window, out_index, &window);
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t m = 0; m < s.channels_out; ++m) {
        const int64_t g = m / m_per_group;
        // Accumulate in double: the reference is the oracle, not the fast path.
        double acc = b != nullptr ? static_cast<double>(b->data<T>()[m]) : 0.0;
        for (int64_t c = 0; c < c_per_group; ++c) {
          const T* x_plane = xd + (n * s.channels_in + g * c_per_group + c) * in_spatial;
          const T* w_kernel = wd + (m * c_per_group + c) * kernel_size;
          for (const WindowTap& tap : window.taps) {
            acc += static_cast<double>(x_plane[tap.input_offset]) *
                   static_cast<double>(w_kernel[tap.kernel_offset]);
          }
        }
        yd[(n * s.channels_out + m) * out_spatial + o] = static_cast<T>(acc);
      }
    }
  }
  return y;
}

StatusOr<ConvShape> InferConvShape(const ir::Node& node, const Tensor& x, const Tensor& w,
                                   const Tensor* b) {
  if (x.rank() < 3) {
    return NodeInvalid(node,
                       "input X is " + x.DebugString() + "; expected rank >= 3 (N, C, spatial...)");
  }
  if (w.rank() != x.rank()) {
    return NodeInvalid(node, "weight W is " + w.DebugString() + " but X is " + x.DebugString() +
                                 "; their ranks must match");
  }
  ConvShape s;
  s.batch = x.size(0);
  s.channels_in = x.size(1);
  s.channels_out = w.size(0);
  s.group = node.GetInt("group", 1);
  if (s.group <= 0 || s.channels_in % s.group != 0 || s.channels_out % s.group != 0) {
    return NodeInvalid(node, "group " + std::to_string(s.group) + " does not divide the " +
                                 std::to_string(s.channels_in) + " input channels and " +
                                 std::to_string(s.channels_out) + " output channels");
  }
  if (w.size(1) != s.channels_in / s.group) {
    return NodeInvalid(node, "weight W is " + w.DebugString() + "; expected dimension 1 to be " +
                                 std::to_string(s.channels_in / s.group) +
                                 " (input channels / group)");
  }
  std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  std::vector<int64_t> kernel_attr = node.GetInts("kernel_shape", kernel);
  if (kernel_attr != kernel) {
    return NodeInvalid(node, "kernel_shape " + SizesText(kernel_attr) +
                                 " does not match the weight's spatial sizes " + SizesText(kernel));
  }
  if (b != nullptr && (b->rank() != 1 || b->size(0) != s.channels_out)) {
    return NodeInvalid(node, "bias B is " + b->DebugString() + "; expected [" +
                                 std::to_string(s.channels_out) + "]");
  }
  std::vector<int64_t> input(x.sizes().begin() + 2, x.sizes().end());
  ASSIGN_OR_RETURN(
      s.window, ComputeWindowGeometry(node, std::move(input), std::move(kernel), WindowOptions{}));
  return s;
}

}  // namespace

KernelResult Conv(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(args, 1, "W"));
  const Tensor* b = OptionalInput(args, 2);
  RETURN_IF_ERROR(CheckFloatType(node, *x, "X"));
  RETURN_IF_ERROR(CheckSameType(node, *x, "X", *w, "W"));
  if (b != nullptr) RETURN_IF_ERROR(CheckSameType(node, *x, "X", *b, "B"));
  ASSIGN_OR_RETURN(ConvShape s, InferConvShape(node, *x, *w, b));
  std::vector<int64_t> y_sizes = {s.batch, s.channels_out};
  y_sizes.insert(y_sizes.end(), s.window.output.begin(), s.window.output.end());
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), y_sizes));
  if (x->dtype() == DataType::kFloat64)
    return std::vector<Tensor>{RunConv<double>(s, *x, *w, b, y)};
  return std::vector<Tensor>{RunConv<float>(s, *x, *w, b, y)};
}

}  // namespace qtune::runtime::nn
