#include "runtime/reference/broadcast.h"

#include <algorithm>

#include "core/check.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {

StatusOr<std::vector<int64_t>> BroadcastShapes(const ir::Node& node,
                                               std::span<const std::vector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    size_t pad = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[pad + d];
      if (s[d] == o || s[d] == 1) continue;
      if (o == 1) {
        o = s[d];
        continue;
      }
      std::string all;
      for (size_t k = 0; k < shapes.size(); ++k) {
        all += (k > 0 ? " and [" : "[") + SizesToString(shapes[k]) + "]";
      }
      return NodeError(node, "input shapes " + all + " cannot be broadcast together (dimension " +
                                 std::to_string(s[d]) + " vs " + std::to_string(o) + ")");
    }
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_sizes,
                                      const std::vector<int64_t>& out_sizes) {
  QTUNE_CHECK(in_sizes.size() <= out_sizes.size());
  std::vector<int64_t> strides(out_sizes.size(), 0);
  size_t pad = out_sizes.size() - in_sizes.size();
  int64_t stride = 1;
  for (size_t d = in_sizes.size(); d-- > 0;) {
    QTUNE_CHECK(in_sizes[d] == out_sizes[pad + d] || in_sizes[d] == 1);
    strides[pad + d] = in_sizes[d] == 1 ? 0 : stride;
    stride *= in_sizes[d];
  }
  return strides;
}

BroadcastWalker::BroadcastWalker(std::vector<int64_t> out_sizes,
                                 std::vector<std::vector<int64_t>> in_strides)
    : sizes_(std::move(out_sizes)),
      strides_(std::move(in_strides)),
      counter_(sizes_.size(), 0),
      offsets_(strides_.size(), 0) {
  for (const auto& s : strides_) QTUNE_CHECK(s.size() == sizes_.size());
}

void BroadcastWalker::Next() {
  for (size_t d = sizes_.size(); d-- > 0;) {
    for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] += strides_[k][d];
    if (++counter_[d] < sizes_[d]) return;
    for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] -= strides_[k][d] * sizes_[d];
    counter_[d] = 0;
  }
}

}  // namespace qtune::runtime::reference
