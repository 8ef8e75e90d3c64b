// Reference kernels that pick elements by index: Gather and GatherElements. Indices are
// int32 or int64, may be negative (counted from the end) and are range-checked. Every
// storable element type.
#include <cstring>

#include "runtime/reference/nn_util.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

StatusOr<std::vector<int64_t>> ReadNormalizedIndices(const ir::Node& node, const Tensor& indices,
                                                     int64_t dim, int64_t axis) {
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(node, indices, "indices"));
  for (int64_t& v : idx) {
    if (v < -dim || v >= dim) {
      return NodeError(node, "index " + std::to_string(v) + " is out of range for axis " +
                                 std::to_string(axis) + " of size " + std::to_string(dim));
    }
    if (v < 0) v += dim;
  }
  return idx;
}

// out = data[:axis] + indices.shape + data[axis+1:]
Outputs Gather(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& data = a.inputs[0];
  const Tensor& indices = a.inputs[1];
  const int64_t rank = static_cast<int64_t>(data.rank());
  if (rank == 0) return NodeError(a.node, "data must have rank >= 1");
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a.node, a.node.GetInt("axis", 0), rank));
  ASSIGN_OR_RETURN(std::vector<int64_t> idx,
                   ReadNormalizedIndices(a.node, indices, data.size(axis), axis));
  std::vector<int64_t> out_sizes(data.sizes().begin(), data.sizes().begin() + axis);
  out_sizes.insert(out_sizes.end(), indices.sizes().begin(), indices.sizes().end());
  out_sizes.insert(out_sizes.end(), data.sizes().begin() + axis + 1, data.sizes().end());
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(data.dtype(), out_sizes));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.size(d);
  for (int64_t d = axis + 1; d < rank; ++d) inner *= data.size(d);
  const size_t block = static_cast<size_t>(inner) * DataTypeSize(data.dtype());
  const auto* src = static_cast<const std::byte*>(data.raw_data());
  auto* dst = static_cast<std::byte*>(y.raw_data());
  const int64_t n = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer && block > 0; ++o) {
    for (int64_t k = 0; k < n; ++k) {
      std::memcpy(dst + (o * n + k) * block, src + (o * data.size(axis) + idx[k]) * block, block);
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

// out[i][j][k] = data[index[i][j][k]][j][k] for axis 0 (and likewise for other axes).
Outputs GatherElements(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& data = a.inputs[0];
  const Tensor& indices = a.inputs[1];
  const int64_t rank = static_cast<int64_t>(data.rank());
  if (rank == 0 || indices.rank() != data.rank()) {
    return NodeError(a.node, "indices " + indices.DebugString() + " and data " +
                                 data.DebugString() + " must have the same rank >= 1");
  }
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a.node, a.node.GetInt("axis", 0), rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && indices.size(d) > data.size(d)) {
      return NodeError(a.node, "indices " + indices.DebugString() + " exceed data " +
                                   data.DebugString() + " in dim " + std::to_string(d));
    }
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> idx,
                   ReadNormalizedIndices(a.node, indices, data.size(axis), axis));
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(data.dtype(), indices.sizes()));
  const std::vector<int64_t> strides = ContiguousStrides(data.sizes());
  const size_t element_size = DataTypeSize(data.dtype());
  std::vector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += (d == axis ? idx[i] : counter[d]) * strides[d];
    CopyElement(y.raw_data(), i, data.raw_data(), src, element_size);
    nn::NextIndex(counter, indices.sizes());
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterGatherKernels(ReferenceRegistry& r) {
  r.Register("Gather", Gather);
  r.Register("GatherElements", GatherElements);
}

}  // namespace qtune::runtime::reference
