// MaxUnpool: scatters X into a zero tensor at the flat positions in I (MaxPool's Indices:
// offsets into the whole output tensor, N and C included). The output's sizes are
// output_shape when given, else N, C and (in - 1) * stride + kernel - pad_begin - pad_end
// per spatial dim. Any element type (values are copied); int32/int64 indices.
#include <cstdint>

#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

StatusOr<std::vector<int64_t>> DefaultOutputSizes(const ir::Node& node, const Tensor& x) {
  const size_t spatial = x.rank() - 2;
  const std::vector<int64_t> kernel = node.GetInts("kernel_shape", {});
  const std::vector<int64_t> strides = node.GetInts("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial) {
    return NodeError(node, "kernel_shape, strides and pads must match the " +
                               std::to_string(spatial) + " spatial dims of X " + x.DebugString());
  }
  std::vector<int64_t> sizes = {x.size(0), x.size(1)};
  for (size_t d = 0; d < spatial; ++d) {
    // In 128 bits: the attributes are a model's int64s and may overflow int64 arithmetic.
    const __int128 size =
        __int128{x.size(d + 2) - 1} * strides[d] + kernel[d] - pads[d] - pads[d + spatial];
    if (kernel[d] <= 0 || strides[d] <= 0 || size < 0 || size > INT64_MAX) {
      return NodeError(node, "kernel_shape, strides and pads give a negative output size for X " +
                                 x.DebugString());
    }
    sizes.push_back(static_cast<int64_t>(size));
  }
  return sizes;
}

StatusOr<std::vector<Tensor>> MaxUnpool(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 3));
  const Tensor& x = a.inputs[0];
  const Tensor& indices = a.inputs[1];
  if (x.rank() < 3) {
    return NodeError(a.node, "X is " + x.DebugString() + "; MaxUnpool needs [N, C, D1, ...]");
  }
  if (indices.sizes() != x.sizes()) {
    return NodeError(
        a.node, "indices " + indices.DebugString() + " must have X's sizes " + x.DebugString());
  }
  std::vector<int64_t> out_sizes;
  if (HasInput(a, 2)) {
    ASSIGN_OR_RETURN(out_sizes, ReadIndices(a.node, a.inputs[2], "output_shape"));
    if (out_sizes.size() != x.rank()) {
      return NodeError(a.node, "output_shape [" + SizesToString(out_sizes) +
                                   "] must have X's rank " + std::to_string(x.rank()));
    }
    for (int64_t size : out_sizes) {
      if (size < 0) return NodeError(a.node, "output_shape has a negative size");
    }
  } else {
    ASSIGN_OR_RETURN(out_sizes, DefaultOutputSizes(a.node, x));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(a.node, indices, "I"));
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), out_sizes));
  const size_t element_size = DataTypeSize(x.dtype());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (idx[i] < 0 || idx[i] >= y.num_elements()) {
      return NodeError(
          a.node, "index " + std::to_string(idx[i]) + " is outside the output " + y.DebugString());
    }
    CopyElement(y.raw_data(), idx[i], x.raw_data(), i, element_size);
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterMaxUnpoolKernels(ReferenceRegistry& registry) {
  registry.Register("MaxUnpool", MaxUnpool);
}

}  // namespace qtune::runtime::reference
