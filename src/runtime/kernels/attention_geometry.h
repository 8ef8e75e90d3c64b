// What the qtune::Attention kernels (onednn_attention.cc, native_attention.cc) read from a
// request: the sizes of Q [B, S, H*D], K and V [B, T, H*D], the scale, and how the
// optional mask broadcasts to the scores [B, H, S, T].
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/kernels/kernel.h"

namespace qtune::runtime {

struct AttentionGeometry {
  int64_t b = 0, h = 0, s = 0, t = 0, d = 0;
  float scale = 1.0f;
  bool has_mask = false;
  // Element strides of the mask over [B, H, S, T] (0 on broadcast axes); all 0 without one.
  std::vector<int64_t> mask_strides = std::vector<int64_t>(4, 0);
  int64_t hidden() const { return h * d; }
};

// The geometry of a float32 qtune::Attention with Q, K, V of rank 3 and a float32 mask
// that broadcasts, or nullopt (saying why in request.why_not where it is worth a line).
std::optional<AttentionGeometry> AttentionGeometryOf(const KernelRequest& request);

}  // namespace qtune::runtime
