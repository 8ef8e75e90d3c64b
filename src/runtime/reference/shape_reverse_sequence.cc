// ReverseSequence: for each batch entry b, reverses the first sequence_lens[b] steps along
// time_axis and copies the rest. batch_axis and time_axis are 0 and 1 (either order); any
// element type (bytes are copied).
#include <cstring>

#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

StatusOr<std::vector<Tensor>> ReverseSequence(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 2, 2));
  const Tensor& x = a.inputs[0];
  const Tensor& lens_tensor = a.inputs[1];
  if (x.rank() < 2) {
    return NodeError(a.node, "input is " + x.DebugString() + "; ReverseSequence needs rank >= 2");
  }
  const int64_t batch_axis = a.node.GetInt("batch_axis", 1);
  const int64_t time_axis = a.node.GetInt("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    return NodeError(a.node, "batch_axis " + std::to_string(batch_axis) + " and time_axis " +
                                 std::to_string(time_axis) + " must be 0 and 1 (either order)");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> lens, ReadIndices(a.node, lens_tensor, "sequence_lens"));
  const int64_t batch = x.size(batch_axis), steps = x.size(time_axis);
  if (lens_tensor.rank() != 1 || static_cast<int64_t>(lens.size()) != batch) {
    return NodeError(a.node, "sequence_lens " + lens_tensor.DebugString() +
                                 " must hold one length "
                                 "per batch entry: " +
                                 std::to_string(batch) + " (dim " + std::to_string(batch_axis) +
                                 " of input " + x.DebugString() + ")");
  }
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] < 0 || lens[b] > steps) {
      return NodeError(a.node, "sequence_lens[" + std::to_string(b) +
                                   "] = " + std::to_string(lens[b]) + " is outside [0, " +
                                   std::to_string(steps) + "], the time dimension's size");
    }
  }
  Tensor y = x.Clone();
  // One (time, batch) cell is a contiguous block of the dims after the first two.
  const size_t block =
      static_cast<size_t>(x.num_elements() / (batch * steps > 0 ? batch * steps : 1)) *
      DataTypeSize(x.dtype());
  const int64_t batch_stride = batch_axis == 0 ? steps : 1;
  const int64_t time_stride = time_axis == 0 ? batch : 1;
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(y.raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < lens[b]; ++t) {
      const int64_t from = b * batch_stride + (lens[b] - 1 - t) * time_stride;
      const int64_t to = b * batch_stride + t * time_stride;
      std::memcpy(dst + to * block, src + from * block, block);
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterReverseSequenceKernels(ReferenceRegistry& registry) {
  registry.Register("ReverseSequence", ReverseSequence);
}

}  // namespace qtune::runtime::reference
