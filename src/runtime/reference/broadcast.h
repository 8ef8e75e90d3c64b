// Multidirectional (numpy-style) broadcasting for the reference kernels: the broadcast
// shape of several inputs, and a walker that visits a broadcast output in C order while
// tracking the matching element of each input.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/shape.h"
#include "core/status.h"
#include "ir/graph.h"

namespace qtune::runtime::reference {

// The broadcast of all `shapes` (right-aligned; each dim equal or 1). InvalidArgument
// naming the node and both shapes when they are incompatible.
StatusOr<std::vector<int64_t>> BroadcastShapes(const ir::Node& node,
                                               std::span<const std::vector<int64_t>> shapes);

// Strides (in elements) of a C-order tensor of `in_sizes` as seen from an output of
// `out_sizes`: right-aligned, 0 for dims the input broadcasts over.
// REQUIRES: in_sizes broadcasts to out_sizes.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_sizes,
                                      const std::vector<int64_t>& out_sizes);

// Visits every element of an output of `out_sizes` in C order. offset(k) is the element
// index of input k (by its strides, usually BroadcastStrides) for the current position.
class BroadcastWalker {
 public:
  BroadcastWalker(std::vector<int64_t> out_sizes, std::vector<std::vector<int64_t>> in_strides);

  int64_t offset(size_t input) const { return offsets_[input]; }
  // Moves to the next output element (wraps to the first after the last).
  void Next();

 private:
  std::vector<int64_t> sizes_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> counter_;
  std::vector<int64_t> offsets_;
};

// out[i] = fn(a[ia], b[ib]) over the broadcast of a_sizes and b_sizes (= out_sizes).
template <typename A, typename B, typename O, typename Fn>
void BroadcastBinary(const A* a, const std::vector<int64_t>& a_sizes, const B* b,
                     const std::vector<int64_t>& b_sizes, O* out,
                     const std::vector<int64_t>& out_sizes, Fn fn) {
  const int64_t n = NumElements(out_sizes);
  if (a_sizes == out_sizes && b_sizes == out_sizes) {
    for (int64_t i = 0; i < n; ++i) out[i] = fn(a[i], b[i]);
    return;
  }
  if (a_sizes == out_sizes && NumElements(b_sizes) == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = fn(a[i], b[0]);
    return;
  }
  BroadcastWalker walker(
      out_sizes, {BroadcastStrides(a_sizes, out_sizes), BroadcastStrides(b_sizes, out_sizes)});
  for (int64_t i = 0; i < n; ++i, walker.Next()) {
    out[i] = fn(a[walker.offset(0)], b[walker.offset(1)]);
  }
}

}  // namespace qtune::runtime::reference
