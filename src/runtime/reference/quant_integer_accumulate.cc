// Integer accumulation shared by the quantized conv and matmul references (contract:
// quant_integer_accumulate.h).
#include "runtime/reference/quant_integer_accumulate.h"

#include <string>

#include "runtime/reference/nn_util.h"

namespace qtune::runtime::quant {

std::vector<int32_t> CenteredBytes(const Tensor& t, const std::vector<int32_t>& zero_points,
                                   int64_t block) {
  std::vector<int32_t> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const int32_t q = t.dtype() == DataType::kUint8 ? int32_t{t.data<uint8_t>()[i]}
                                                    : int32_t{t.data<int8_t>()[i]};
    v[i] = q - zero_points[block == 0 ? 0 : i / block];
  }
  return v;
}

StatusOr<int64_t> CheckIntegerConvShapes(const ir::Node& node, const Tensor& x, const Tensor& w,
                                         const ConvOperandNames& names) {
  const std::string x_text = std::string(names.x) + " " + x.DebugString();
  const std::string w_text = std::string(names.w) + " " + w.DebugString();
  if (x.rank() < 3 || w.rank() != x.rank()) {
    return nn::NodeInvalid(node, std::string(names.x) + " is " + x.DebugString() + " and " +
                                     w_text + "; expected equal ranks >= 3 (N, C, spatial...)");
  }
  const int64_t c_in = x.size(1), c_out = w.size(0), group = node.GetInt("group", 1);
  if (group <= 0 || c_in % group != 0 || c_out % group != 0 || w.size(1) != c_in / group) {
    return nn::NodeInvalid(
        node, "group " + std::to_string(group) + " does not fit " + x_text + " and " + w_text);
  }
  return c_out;
}

StatusOr<IntegerConvAccumulation> AccumulateIntegerConv(const ir::Node& node,
                                                        const IntegerConvOperands& operands) {
  const Tensor& x = *operands.x;
  const Tensor& w = *operands.w;
  const int64_t batch = x.size(0), c_in = x.size(1), c_out = w.size(0);
  const int64_t group = node.GetInt("group", 1);
  std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  if (node.GetInts("kernel_shape", kernel) != kernel) {
    return nn::NodeInvalid(node, "kernel_shape does not match " + std::string(operands.names.w) +
                                     " " + w.DebugString());
  }
  std::vector<int64_t> spatial(x.sizes().begin() + 2, x.sizes().end());
  ASSIGN_OR_RETURN(nn::WindowGeometry geo,
                   nn::ComputeWindowGeometry(node, spatial, kernel, nn::WindowOptions{}));
  const int64_t in_spatial = nn::Product(geo.input), out_spatial = nn::Product(geo.output);
  const int64_t kernel_size = nn::Product(geo.kernel);
  const int64_t c_per_group = c_in / group, m_per_group = c_out / group;
  const std::vector<int32_t> xc = CenteredBytes(x, {operands.x_zero_point}, 0);
  const std::vector<int32_t> wc =
      CenteredBytes(w, *operands.w_zero_points, c_per_group * kernel_size);
  IntegerConvAccumulation result;
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

StatusOr<Tensor> WrapToInt32(const std::vector<int64_t>& sums, const std::vector<int64_t>& sizes) {
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kInt32, sizes));
  int32_t* out = y.data<int32_t>();
  for (size_t i = 0; i < sums.size(); ++i) out[i] = static_cast<int32_t>(sums[i]);
  return y;
}

}  // namespace qtune::runtime::quant
