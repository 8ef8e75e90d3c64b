// ConvTranspose: the adjoint of Conv (each input element scatters a weighted copy of the
// kernel into the output), with groups, strides, dilations, pads, output_padding,
// output_shape and auto_pad as the ONNX operator specification defines them.
#include <algorithm>
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_util.h"

namespace qtune::runtime::nn {
namespace {

struct ConvTransposeShape {
  int64_t batch = 0;
  int64_t channels_in = 0;
  int64_t channels_out = 0;
  int64_t group = 1;
  std::vector<int64_t> input;  // spatial
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  std::vector<int64_t> output;  // spatial
};

int64_t FloorHalf(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

StatusOr<std::vector<int64_t>> ReadAttrInts(const ir::Node& node, std::string_view name,
                                            size_t count, int64_t fallback, int64_t minimum) {
  std::vector<int64_t> values = node.GetInts(name, std::vector<int64_t>(count, fallback));
  if (values.size() != count) {
    return NodeInvalid(node, "attribute " + std::string(name) + " has " +
                                 std::to_string(values.size()) + " values; expected " +
                                 std::to_string(count));
  }
  for (int64_t v : values) {
    if (v < minimum) {
      return NodeInvalid(node, "attribute " + std::string(name) + " " + SizesText(values) +
                                   " has a value below " + std::to_string(minimum));
    }
  }
  return values;
}

StatusOr<ConvTransposeShape> InferShape(const ir::Node& node, const Tensor& x, const Tensor& w,
                                        const Tensor* b) {
  if (x.rank() < 3 || w.rank() != x.rank()) {
    return NodeInvalid(node, "X is " + x.DebugString() + " and W is " + w.DebugString() +
                                 "; expected equal ranks >= 3");
  }
  ConvTransposeShape s;
  const size_t rank = x.rank() - 2;
  s.batch = x.size(0);
  s.channels_in = x.size(1);
  s.group = node.GetInt("group", 1);
  if (s.group <= 0 || s.channels_in % s.group != 0 || w.size(0) != s.channels_in) {
    return NodeInvalid(node, "W is " + w.DebugString() + " for X " + x.DebugString() +
                                 " and group " + std::to_string(s.group) +
                                 "; expected W dimension 0 to equal the input channels, "
                                 "divisible by group");
  }
  s.channels_out = w.size(1) * s.group;
  if (b != nullptr && (b->rank() != 1 || b->size(0) != s.channels_out)) {
    return NodeInvalid(node, "bias B is " + b->DebugString() + "; expected [" +
                                 std::to_string(s.channels_out) + "]");
  }
  s.input.assign(x.sizes().begin() + 2, x.sizes().end());
  s.kernel.assign(w.sizes().begin() + 2, w.sizes().end());
  if (node.GetInts("kernel_shape", s.kernel) != s.kernel) {
    return NodeInvalid(node, "kernel_shape " + SizesText(node.GetInts("kernel_shape", {})) +
                                 " does not match the weight's spatial sizes " +
                                 SizesText(s.kernel));
  }
  ASSIGN_OR_RETURN(s.strides, ReadAttrInts(node, "strides", rank, 1, 1));
  ASSIGN_OR_RETURN(s.dilations, ReadAttrInts(node, "dilations", rank, 1, 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                   ReadAttrInts(node, "output_padding", rank, 0, 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> pads, ReadAttrInts(node, "pads", 2 * rank, 0, 0));
  ASSIGN_OR_RETURN(AutoPad auto_pad, ParseAutoPad(node));
  std::vector<int64_t> output_shape = node.GetInts("output_shape", {});
  if (!output_shape.empty() && output_shape.size() == rank + 2) {
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  }
  if (!output_shape.empty() && output_shape.size() != rank) {
    return NodeInvalid(node, "output_shape " + SizesText(node.GetInts("output_shape", {})) +
                                 " does not have " + std::to_string(rank) + " spatial sizes");
  }
  s.pads_begin.assign(rank, 0);
  s.pads_end.assign(rank, 0);
  s.output.assign(rank, 0);
  // Sizes from attributes may be as large as int64 holds: the arithmetic runs in 128 bits
  // and every size must stay at most kMaxSize, so that no product or sum below overflows.
  using Wide = __int128;
  constexpr int64_t kMaxSize = int64_t{1} << 61;
  for (int64_t size : output_shape) {
    if (size <= 0 || size > kMaxSize) {
      return NodeInvalid(
          node, "output_shape " + SizesText(output_shape) + " has a size <= 0 or above 2^61");
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    const Wide natural_wide = Wide{s.strides[i]} * (s.input[i] - 1) + output_padding[i] +
                              Wide{s.kernel[i] - 1} * s.dilations[i] + 1;
    if (natural_wide > kMaxSize) {
      return NodeInvalid(node, "strides, dilations and output_padding give spatial dimension " +
                                   std::to_string(i) + " more than 2^61 elements");
    }
    const int64_t natural = static_cast<int64_t>(natural_wide);
    bool derive_pads =
        !output_shape.empty() || auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower;
    if (derive_pads) {
      // Spec: the pads follow from the requested output size; SAME_UPPER puts the odd one
      // at the end, every other mode at the beginning.
      s.output[i] = !output_shape.empty() ? output_shape[i] : s.input[i] * s.strides[i];
      const int64_t total = natural - s.output[i];
      if (auto_pad == AutoPad::kSameUpper) {
        s.pads_begin[i] = FloorHalf(total);
        s.pads_end[i] = total - FloorHalf(total);
      } else {
        s.pads_begin[i] = total - FloorHalf(total);
        s.pads_end[i] = FloorHalf(total);
      }
    } else {
      if (auto_pad == AutoPad::kNotSet) {
        s.pads_begin[i] = pads[i];
        s.pads_end[i] = pads[rank + i];
      }
      const Wide output = Wide{natural} - s.pads_begin[i] - s.pads_end[i];
      // (<= 0 is refused below; pads up to INT64_MAX may take it below int64's range)
      s.output[i] = static_cast<int64_t>(std::max(output, Wide{-kMaxSize}));
    }
    if (s.output[i] <= 0) {
      return NodeInvalid(node, "the output size in spatial dimension " + std::to_string(i) +
                                   " is " + std::to_string(s.output[i]) +
                                   "; check pads and output_shape");
    }
  }
  return s;
}

template <typename T>
Tensor RunConvTranspose(const ConvTransposeShape& s, const Tensor& x, const Tensor& w,
                        const Tensor* b, Tensor y) {
  const int64_t in_spatial = Product(s.input);
  const int64_t out_spatial = Product(s.output);
  const int64_t kernel_size = Product(s.kernel);
  const int64_t c_per_group = s.channels_in / s.group;
  const int64_t m_per_group = s.channels_out / s.group;
  std::vector<double> acc(static_cast<size_t>(y.num_elements()), 0.0);
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    acc[i] =
        b != nullptr ? static_cast<double>(b->data<T>()[(i / out_spatial) % s.channels_out]) : 0.0;
  }
  // The scatter o = i * stride - pad_begin + k * dilation is the gather of ComputeWindow with
  // the roles of input and output exchanged.
  WindowGeometry scatter{.input = s.output,
                         .kernel = s.kernel,
                         .strides = s.strides,
                         .dilations = s.dilations,
                         .pads_begin = s.pads_begin,
                         .pads_end = s.pads_end,
                         .output = s.input};
  const T* xd = x.data<T>();
  const T* wd = w.data<T>();
  std::vector<int64_t> in_index(s.input.size(), 0);
  Window window;
  for (int64_t p = 0; p < in_spatial; ++p, NextIndex(in_index, s.input)) {
    ComputeWindow(scatter, in_index, &window);
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t c = 0; c < s.channels_in; ++c) {
        const double xv = static_cast<double>(xd[(n * s.channels_in + c) * in_spatial + p]);
        const int64_t g = c / c_per_group;
        for (int64_t m = 0; m < m_per_group; ++m) {
          const T* w_kernel = wd + (c * m_per_group + m) * kernel_size;
          double* y_plane = acc.data() + (n * s.channels_out + g * m_per_group + m) * out_spatial;
          for (const WindowTap& tap : window.taps) {
            y_plane[tap.input_offset] += xv * static_cast<double>(w_kernel[tap.kernel_offset]);
          }
        }
      }
    }
  }
  T* yd = y.data<T>();
  for (int64_t i = 0; i < y.num_elements(); ++i) yd[i] = static_cast<T>(acc[i]);
  return y;
}

}  // namespace

KernelResult ConvTranspose(const KernelArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(args, 1, "W"));
  const Tensor* b = OptionalInput(args, 2);
  RETURN_IF_ERROR(CheckFloatType(node, *x, "X"));
  RETURN_IF_ERROR(CheckSameType(node, *x, "X", *w, "W"));
  if (b != nullptr) RETURN_IF_ERROR(CheckSameType(node, *x, "X", *b, "B"));
  ASSIGN_OR_RETURN(ConvTransposeShape s, InferShape(node, *x, *w, b));
  std::vector<int64_t> y_sizes = {s.batch, s.channels_out};
  y_sizes.insert(y_sizes.end(), s.output.begin(), s.output.end());
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x->dtype(), y_sizes));
  if (x->dtype() == DataType::kFloat64) {
    return std::vector<Tensor>{RunConvTranspose<double>(s, *x, *w, b, y)};
  }
  return std::vector<Tensor>{RunConvTranspose<float>(s, *x, *w, b, y)};
}

}  // namespace qtune::runtime::nn
