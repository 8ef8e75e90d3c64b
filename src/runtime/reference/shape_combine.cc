// Reference kernels that join, divide or repeat tensors: Concat, Split (split sizes as
// an attribute before opset 13, an input from 13, num_outputs from 18) and Tile. They
// work on every storable element type.
#include <cstring>

#include "runtime/reference/nn_util.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

using Outputs = StatusOr<std::vector<Tensor>>;

Outputs Concat(const KernelArgs& a) {
  if (a.inputs.empty()) return NodeError(a.node, "needs at least one input");
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (!a.inputs[i].is_valid())
      return NodeError(a.node, "input " + std::to_string(i) + " is missing");
  }
  if (!a.node.HasAttribute("axis")) return NodeError(a.node, "the attribute 'axis' is missing");
  const Tensor& first = a.inputs[0];
  const size_t rank = first.rank();
  if (rank == 0) return NodeError(a.node, "cannot concatenate scalars");
  ASSIGN_OR_RETURN(int64_t axis,
                   NormalizeAxis(a.node, a.node.GetInt("axis", 0), static_cast<int64_t>(rank)));
  std::vector<int64_t> out_sizes = first.sizes();
  out_sizes[axis] = 0;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const Tensor& t = a.inputs[i];
    bool compatible = t.dtype() == first.dtype() && t.rank() == rank;
    for (size_t d = 0; compatible && d < rank; ++d) {
      compatible = static_cast<int64_t>(d) == axis || t.size(d) == first.size(d);
    }
    if (!compatible) {
      return NodeError(a.node, "input " + std::to_string(i) + " " + t.DebugString() +
                                   " does not match input 0 " + first.DebugString() +
                                   " outside axis " + std::to_string(axis));
    }
    out_sizes[axis] += t.size(axis);
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(first.dtype(), out_sizes));
  const size_t element_size = DataTypeSize(first.dtype());
  const int64_t outer = nn::Product(out_sizes, 0, axis);
  const int64_t inner = nn::Product(out_sizes, axis + 1, rank);
  const int64_t out_row = out_sizes[axis] * inner;
  int64_t column = 0;  // elements of each output row already filled
  for (const Tensor& t : a.inputs) {
    const int64_t row = t.size(axis) * inner;
    for (int64_t o = 0; o < outer && row > 0; ++o) {
      std::memcpy(static_cast<std::byte*>(y.raw_data()) + (o * out_row + column) * element_size,
                  static_cast<const std::byte*>(t.raw_data()) + o * row * element_size,
                  row * element_size);
    }
    column += row;
  }
  return std::vector<Tensor>{std::move(y)};
}

// The size of each output along the axis.
StatusOr<std::vector<int64_t>> SplitSizes(const KernelArgs& a, int64_t dim, size_t num_outputs) {
  std::vector<int64_t> split;
  if (HasInput(a, 1)) {
    ASSIGN_OR_RETURN(split, ReadIndices(a.node, a.inputs[1], "split"));
  } else if (a.node.HasAttribute("split")) {
    split = a.node.GetInts("split", {});
  }
  if (!split.empty()) {
    int64_t total = 0;
    for (int64_t s : split) {
      if (s < 0) return NodeError(a.node, "split " + Bracketed(split) + " has a negative size");
      total += s;
    }
    if (total != dim || split.size() != num_outputs) {
      return NodeError(a.node, "split " + Bracketed(split) + " does not divide a dimension of " +
                                   std::to_string(dim) + " into " + std::to_string(num_outputs) +
                                   " outputs");
    }
    return split;
  }
  const int64_t n = static_cast<int64_t>(num_outputs);
  if (a.node.HasAttribute("num_outputs")) {
    // Opset 18: equal chunks of ceil(dim / n); the last one may be smaller.
    if (a.node.GetInt("num_outputs", 0) != n) {
      return NodeError(a.node, "num_outputs = " + std::to_string(a.node.GetInt("num_outputs", 0)) +
                                   " but the node has " + std::to_string(n) + " outputs");
    }
    const int64_t chunk = (dim + n - 1) / n;
    if (chunk * (n - 1) > dim) {
      return NodeError(a.node, "cannot split a dimension of " + std::to_string(dim) + " into " +
                                   std::to_string(n) + " chunks of " + std::to_string(chunk));
    }
    split.assign(num_outputs, chunk);
    split.back() = dim - chunk * (n - 1);
    return split;
  }
  if (dim % n != 0) {
    return NodeError(a.node, "a dimension of " + std::to_string(dim) +
                                 " does not split evenly into " + std::to_string(n) + " outputs");
  }
  return std::vector<int64_t>(num_outputs, dim / n);
}

Outputs Split(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 2));
  const Tensor& x = a.inputs[0];
  const size_t num_outputs = a.node.num_outputs();
  if (num_outputs == 0) return NodeError(a.node, "has no outputs");
  ASSIGN_OR_RETURN(int64_t axis,
                   NormalizeAxis(a.node, a.node.GetInt("axis", 0), static_cast<int64_t>(x.rank())));
  ASSIGN_OR_RETURN(std::vector<int64_t> split, SplitSizes(a, x.size(axis), num_outputs));
  const size_t element_size = DataTypeSize(x.dtype());
  const int64_t outer = nn::Product(x.sizes(), 0, axis);
  const int64_t inner = nn::Product(x.sizes(), axis + 1, x.rank());
  const int64_t in_row = x.size(axis) * inner;
  std::vector<Tensor> outputs;
  int64_t column = 0;
  for (int64_t part : split) {
    std::vector<int64_t> sizes = x.sizes();
    sizes[axis] = part;
    ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), sizes));
    const int64_t row = part * inner;
    for (int64_t o = 0; o < outer && row > 0; ++o) {
      std::memcpy(
          static_cast<std::byte*>(y.raw_data()) + o * row * element_size,
          static_cast<const std::byte*>(x.raw_data()) + (o * in_row + column) * element_size,
          row * element_size);
    }
    column += row;
    outputs.push_back(std::move(y));
  }
  return outputs;
}

Outputs Tile(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& x = a.inputs[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ReadIndices(a.node, a.inputs[1], "repeats"));
  if (repeats.size() != x.rank()) {
    return NodeError(a.node, "repeats " + Bracketed(repeats) + " must have one entry per " +
                                 "input dim (input " + Bracketed(x.sizes()) + ")");
  }
  std::vector<int64_t> out_sizes(x.rank());
  for (size_t d = 0; d < x.rank(); ++d) {
    if (repeats[d] < 0) return NodeError(a.node, "repeats " + Bracketed(repeats) + " is negative");
    out_sizes[d] = x.size(d) * repeats[d];
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(x.dtype(), out_sizes));
  const std::vector<int64_t> in_strides = ContiguousStrides(x.sizes());
  const size_t element_size = DataTypeSize(x.dtype());
  std::vector<int64_t> counter(x.rank(), 0);
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < x.rank(); ++d) src += (counter[d] % x.size(d)) * in_strides[d];
    CopyElement(y.raw_data(), i, x.raw_data(), src, element_size);
    nn::NextIndex(counter, out_sizes);
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterCombineKernels(ReferenceRegistry& r) {
  r.Register("Concat", Concat);
  r.Register("Split", Split);
  r.Register("Tile", Tile);
}

}  // namespace qtune::runtime::reference
