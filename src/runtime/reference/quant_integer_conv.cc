// ConvInteger and QLinearConv reference kernels (contract: quant_kernels.h).
//
// Both accumulate sum((x - x_zero_point) * (w - w_zero_point[m])) exactly in int64 over the
// window taps that fall inside the input; a padded position contributes nothing, which is
// padding x with its zero point. ConvInteger stores the sum as int32. QLinearConv adds the
// int32 bias B[m], scales by x_scale * w_scale[m] (in double, rounded once to float) and
// requantizes with y_scale / y_zero_point.
#include <cstdint>
#include <vector>

#include "runtime/reference/nn_util.h"
#include "runtime/reference/quant_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::quant {
namespace {

struct ConvAccumulation {
  std::vector<int64_t> sums;     // one per output element, row-major over y_sizes
  std::vector<int64_t> y_sizes;  // [N, M, spatial...]
  int64_t out_spatial = 1;
};

// (q - zero_point[i / block]) for every element of a uint8/int8 tensor.
std::vector<int32_t> Centered(const Tensor& t, const std::vector<int32_t>& zero_points,
                              int64_t block) {
  std::vector<int32_t> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const int32_t q = t.dtype() == DataType::kUint8 ? int32_t{t.data<uint8_t>()[i]}
                                                    : int32_t{t.data<int8_t>()[i]};
    v[i] = q - zero_points[block == 0 ? 0 : i / block];
  }
  return v;
}

// Checks X [N, C, spatial...] and W [M, C / group, kernel...] and the Conv attributes;
// returns W's M.
StatusOr<int64_t> CheckConvOperands(const ir::Node& node, const Tensor& x, const Tensor& w) {
  RETURN_IF_ERROR(CheckByteType(node, x, "x"));
  RETURN_IF_ERROR(CheckByteType(node, w, "w"));
  if (x.rank() < 3 || w.rank() != x.rank()) {
    return reference::NodeError(node, "x is " + x.DebugString() + " and w " + w.DebugString() +
                                          "; expected equal ranks >= 3 (N, C, spatial...)");
  }
  const int64_t c_in = x.size(1), c_out = w.size(0), group = node.GetInt("group", 1);
  if (group <= 0 || c_in % group != 0 || c_out % group != 0 || w.size(1) != c_in / group) {
    return reference::NodeError(node, "group " + std::to_string(group) + " does not fit x " +
                                          x.DebugString() + " and w " + w.DebugString());
  }
  return c_out;
}

StatusOr<ConvAccumulation> AccumulateConv(const ir::Node& node, const Tensor& x, int32_t x_zp,
                                          const Tensor& w, const std::vector<int32_t>& w_zp) {
  const int64_t batch = x.size(0), c_in = x.size(1), c_out = w.size(0);
  const int64_t group = node.GetInt("group", 1);
  std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  if (node.GetInts("kernel_shape", kernel) != kernel) {
    return reference::NodeError(node, "kernel_shape does not match w " + w.DebugString());
  }
  std::vector<int64_t> spatial(x.sizes().begin() + 2, x.sizes().end());
  ASSIGN_OR_RETURN(nn::WindowGeometry geo,
                   nn::ComputeWindowGeometry(node, spatial, kernel, nn::WindowOptions{}));
  const int64_t in_spatial = nn::Product(geo.input), out_spatial = nn::Product(geo.output);
  const int64_t kernel_size = nn::Product(geo.kernel);
  const int64_t c_per_group = c_in / group, m_per_group = c_out / group;
  const std::vector<int32_t> xc = Centered(x, {x_zp}, 0);
  const std::vector<int32_t> wc = Centered(w, w_zp, c_per_group * kernel_size);
  ConvAccumulation result;
  result.out_spatial = out_spatial;
  result.y_sizes = {batch, c_out};
  result.y_sizes.insert(result.y_sizes.end(), geo.output.begin(), geo.output.end());
  result.sums.assign(batch * c_out * out_spatial, 0);
  std::vector<int64_t> out_index(geo.output.size(), 0);
  nn::Window window;
  for (int64_t s = 0; s < out_spatial; ++s, nn::NextIndex(out_index, geo.output)) {
    nn::ComputeWindow(geo, out_index, &window);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t m = 0; m < c_out; ++m) {
        const int64_t g = m / m_per_group;
        int64_t sum = 0;
        for (int64_t c = 0; c < c_per_group; ++c) {
          const int32_t* x_plane = xc.data() + (b * c_in + g * c_per_group + c) * in_spatial;
          const int32_t* w_kernel = wc.data() + (m * c_per_group + c) * kernel_size;
          for (const nn::WindowTap& tap : window.taps) {
            sum += int64_t{x_plane[tap.input_offset]} * w_kernel[tap.kernel_offset];
          }
        }
        result.sums[(b * c_out + m) * out_spatial + s] = sum;
      }
    }
  }
  return result;
}

}  // namespace

// Inputs: x, w, x_zero_point (optional, one element), w_zero_point (optional, one or M).
StatusOr<std::vector<Tensor>> ConvInteger(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(reference::CheckInputCount(args, 2, 4));
  const Tensor& x = args.inputs[0];
  const Tensor& w = args.inputs[1];
  ASSIGN_OR_RETURN(int64_t c_out, CheckConvOperands(node, x, w));
  const Tensor* x_zp_tensor = reference::HasInput(args, 2) ? &args.inputs[2] : nullptr;
  const Tensor* w_zp_tensor = reference::HasInput(args, 3) ? &args.inputs[3] : nullptr;
  ASSIGN_OR_RETURN(std::vector<int32_t> x_zp,
                   ReadZeroPoints(node, x_zp_tensor, x.dtype(), 1, "x_zero_point"));
  ASSIGN_OR_RETURN(std::vector<int32_t> w_zp,
                   ReadZeroPoints(node, w_zp_tensor, w.dtype(), c_out, "w_zero_point"));
  ASSIGN_OR_RETURN(ConvAccumulation acc, AccumulateConv(node, x, x_zp[0], w, w_zp));
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kInt32, acc.y_sizes));
  int32_t* out = y.data<int32_t>();
  // Modulo 2^32, as an int32 accumulator would wrap (C++20 defines the conversion).
  for (size_t i = 0; i < acc.sums.size(); ++i) out[i] = static_cast<int32_t>(acc.sums[i]);
  return std::vector<Tensor>{std::move(y)};
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
StatusOr<std::vector<Tensor>> QLinearConv(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(reference::CheckInputCount(args, 8, 9));
  const Tensor& x = args.inputs[0];
  const Tensor& w = args.inputs[3];
  ASSIGN_OR_RETURN(int64_t c_out, CheckConvOperands(node, x, w));
  ASSIGN_OR_RETURN(std::vector<float> x_scale,
                   ReadScales(node, args.inputs[1], 1, false, "x_scale"));
  ASSIGN_OR_RETURN(std::vector<int32_t> x_zp,
                   ReadZeroPoints(node, &args.inputs[2], x.dtype(), 1, "x_zero_point"));
  ASSIGN_OR_RETURN(std::vector<float> w_scale,
                   ReadScales(node, args.inputs[4], c_out, false, "w_scale"));
  ASSIGN_OR_RETURN(std::vector<int32_t> w_zp,
                   ReadZeroPoints(node, &args.inputs[5], w.dtype(), c_out, "w_zero_point"));
  std::vector<int64_t> bias(c_out, 0);
  if (reference::HasInput(args, 8)) {
    const Tensor& b = args.inputs[8];
    if (b.dtype() != DataType::kInt32 || b.rank() != 1 || b.size(0) != c_out) {
      return reference::NodeError(
          node, "B is " + b.DebugString() + "; expected int32[" + std::to_string(c_out) + "]");
    }
    for (int64_t m = 0; m < c_out; ++m) bias[m] = b.data<int32_t>()[m];
  }
  ASSIGN_OR_RETURN(ConvAccumulation acc, AccumulateConv(node, x, x_zp[0], w, w_zp));
  std::vector<float> real(acc.sums.size());
  for (size_t i = 0; i < acc.sums.size(); ++i) {
    const int64_t m = (static_cast<int64_t>(i) / acc.out_spatial) % c_out;
    real[i] =
        static_cast<float>(static_cast<double>(acc.sums[i] + bias[m]) * x_scale[0] * w_scale[m]);
  }
  ASSIGN_OR_RETURN(Tensor y,
                   Requantize(node, real, acc.y_sizes, args.inputs[6], args.inputs[7], false));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace qtune::runtime::quant
