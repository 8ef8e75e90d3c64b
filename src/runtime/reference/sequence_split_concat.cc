// SplitToSequence (a tensor into a sequence of chunks along one axis) and
// ConcatFromSequence (a sequence into one tensor, joined along an existing or a new axis),
// both opset 11. They copy bytes, so they work for every storable element type.
#include <cstring>
#include <string>
#include <vector>

#include "runtime/reference/nn_util.h"
#include "runtime/reference/tensor_util.h"
#include "runtime/reference/value_kernels.h"
#include "runtime/reference/value_util.h"

namespace qtune::runtime::reference {
namespace {

using Result = StatusOr<std::vector<RunValue>>;

// The chunk lengths along an axis of `dim` elements: `split` absent gives chunks of 1; a
// scalar gives chunks of that length, the last one shorter if needed; a 1-D tensor lists
// the lengths, which must add up to `dim`.
StatusOr<std::vector<int64_t>> ChunkLengths(const ir::Node& node, const Tensor* split,
                                            int64_t dim) {
  if (split == nullptr) return std::vector<int64_t>(static_cast<size_t>(dim), 1);
  if (split->rank() > 1) {
    return NodeError(
        node, "input 'split' must be a scalar or 1-D but has sizes " + Bracketed(split->sizes()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> values, ReadIndices(node, *split, "input 'split'"));
  if (split->rank() == 0) {
    const int64_t chunk = values[0];
    if (chunk <= 0) {
      return NodeError(node, "a scalar 'split' must be positive but is " + std::to_string(chunk));
    }
    std::vector<int64_t> lengths(static_cast<size_t>(dim / chunk), chunk);
    if (dim % chunk != 0) lengths.push_back(dim % chunk);
    return lengths;
  }
  int64_t total = 0;
  for (int64_t v : values) {
    if (v < 0) return NodeError(node, "'split' has a negative length " + std::to_string(v));
    total += v;
  }
  if (total != dim) {
    return NodeError(node, "the lengths in 'split' add up to " + std::to_string(total) +
                               " but the axis has " + std::to_string(dim) + " elements");
  }
  return values;
}

Result SplitToSequence(const ValueKernelArgs& args) {
  const ir::Node& node = args.node;
  if (args.inputs.empty() || args.inputs.size() > 2) {
    return NodeError(node, "expects 1 or 2 inputs but has " + std::to_string(args.inputs.size()));
  }
  ASSIGN_OR_RETURN(const Tensor* input, TensorInput(args, 0, "input"));
  ASSIGN_OR_RETURN(const Tensor* split, OptionalTensorInput(args, 1, "split"));
  if (input->rank() == 0) return NodeError(node, "cannot split a scalar (rank 0) input");
  if (!IsStorableDataType(input->dtype())) return UnsupportedType(node, input->dtype());
  const std::vector<int64_t>& sizes = input->sizes();
  const int64_t rank = static_cast<int64_t>(sizes.size());
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 0), rank));
  const int64_t dim = sizes[axis];
  ASSIGN_OR_RETURN(std::vector<int64_t> lengths, ChunkLengths(node, split, dim));
  const bool keep_axis = split != nullptr || node.GetInt("keepdims", 1) != 0;

  const int64_t outer = nn::Product(sizes, 0, axis);
  const size_t inner_bytes = static_cast<size_t>(nn::Product(sizes, axis + 1, sizes.size())) *
                             DataTypeSize(input->dtype());
  const auto* src = static_cast<const std::byte*>(input->raw_data());
  std::vector<Tensor> chunks;
  chunks.reserve(lengths.size());
  int64_t start = 0;
  for (int64_t length : lengths) {
    std::vector<int64_t> chunk_sizes = sizes;
    chunk_sizes[axis] = length;
    ASSIGN_OR_RETURN(Tensor chunk, Tensor::Allocate(input->dtype(), chunk_sizes));
    auto* dst = static_cast<std::byte*>(chunk.raw_data());
    const size_t block = static_cast<size_t>(length) * inner_bytes;
    for (int64_t o = 0; o < outer && block > 0; ++o) {
      std::memcpy(dst + o * block, src + (o * dim + start) * inner_bytes, block);
    }
    if (!keep_axis) {
      chunk_sizes.erase(chunk_sizes.begin() + axis);
      ASSIGN_OR_RETURN(chunk, chunk.Reshaped(chunk_sizes));
    }
    chunks.push_back(std::move(chunk));
    start += length;
  }
  return std::vector<RunValue>{RunValue::Sequence(input->dtype(), std::move(chunks))};
}

// InvalidArgument naming the node unless `t` matches `first` in type and rank and in every
// size except `axis` (when `axis` >= 0).
Status CheckConcatenable(const ir::Node& node, const Tensor& first, const Tensor& t, size_t index,
                         int64_t axis) {
  const std::string what = "sequence element " + std::to_string(index);
  if (t.dtype() != first.dtype()) {
    return NodeError(node, what + " has type " + std::string(DataTypeName(t.dtype())) +
                               " but element 0 has " + std::string(DataTypeName(first.dtype())));
  }
  bool same = t.rank() == first.rank();
  for (size_t d = 0; same && d < t.rank(); ++d) {
    same = static_cast<int64_t>(d) == axis || t.size(d) == first.size(d);
  }
  if (!same) {
    return NodeError(node,
                     what + " has sizes " + Bracketed(t.sizes()) + " and element 0 " +
                         Bracketed(first.sizes()) +
                         (axis >= 0 ? "; they may differ only along axis " + std::to_string(axis)
                                    : "; with new_axis=1 they must be equal"));
  }
  return Status::Ok();
}

Result ConcatFromSequence(const ValueKernelArgs& args) {
  const ir::Node& node = args.node;
  if (args.inputs.size() != 1) {
    return NodeError(node, "expects 1 input but has " + std::to_string(args.inputs.size()));
  }
  ASSIGN_OR_RETURN(const RunValue* sequence, SequenceInput(args, 0, "input_sequence"));
  if (!node.HasAttribute("axis")) return NodeError(node, "the attribute 'axis' is required");
  const std::vector<Tensor>& elements = sequence->sequence();
  if (elements.empty()) {
    return NodeError(node, "cannot concatenate an empty sequence (the result's shape is unknown)");
  }
  const Tensor& first = elements[0];
  if (!IsStorableDataType(first.dtype())) return UnsupportedType(node, first.dtype());
  const bool new_axis = node.GetInt("new_axis", 0) != 0;
  const int64_t rank = static_cast<int64_t>(first.rank());
  if (!new_axis && rank == 0) {
    return NodeError(node, "cannot concatenate scalars along an existing axis (set new_axis=1)");
  }
  ASSIGN_OR_RETURN(int64_t axis,
                   NormalizeAxis(node, node.GetInt("axis", 0), new_axis ? rank + 1 : rank));
  // Each element as it is joined: with new_axis, a 1 is inserted at `axis`.
  std::vector<int64_t> out_sizes = first.sizes();
  if (new_axis) out_sizes.insert(out_sizes.begin() + axis, 0);
  out_sizes[axis] = 0;
  for (size_t i = 0; i < elements.size(); ++i) {
    RETURN_IF_ERROR(CheckConcatenable(node, first, elements[i], i, new_axis ? -1 : axis));
    out_sizes[axis] += new_axis ? 1 : elements[i].size(axis);
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(first.dtype(), out_sizes));
  const int64_t outer = nn::Product(out_sizes, 0, axis);
  const size_t inner_bytes =
      static_cast<size_t>(nn::Product(out_sizes, axis + 1, out_sizes.size())) *
      DataTypeSize(first.dtype());
  const size_t out_row = static_cast<size_t>(out_sizes[axis]) * inner_bytes;
  auto* dst = static_cast<std::byte*>(out.raw_data());
  size_t offset = 0;  // bytes into each output row where the current element starts
  for (const Tensor& t : elements) {
    const size_t block = static_cast<size_t>(new_axis ? 1 : t.size(axis)) * inner_bytes;
    const auto* src = static_cast<const std::byte*>(t.raw_data());
    for (int64_t o = 0; o < outer && block > 0; ++o) {
      std::memcpy(dst + o * out_row + offset, src + o * block, block);
    }
    offset += block;
  }
  return std::vector<RunValue>{RunValue::Of(std::move(out))};
}

}  // namespace

void RegisterSequenceSplitConcatKernels(ValueKernelRegistry& registry) {
  registry.Register("SplitToSequence", SplitToSequence);
  registry.Register("ConcatFromSequence", ConcatFromSequence);
}

}  // namespace qtune::runtime::reference
