// Static memory planning: given each intermediate buffer's size and the range of plan
// steps during which it is live, assign offsets in one arena so that buffers whose
// lifetimes overlap never overlap in memory, while buffers that are never live together
// share space. Pure function; tested alone on hand-written lifetimes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace qtune::runtime {

struct BufferRequest {
  int64_t bytes = 0;
  int first_step = 0;  // step that writes the buffer
  int last_step = 0;   // last step that reads it (inclusive); >= first_step
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per request, multiples of the alignment
  int64_t arena_bytes = 0;       // total arena size needed
};

// Greedy by size (largest first), each buffer at the lowest aligned offset that does not
// collide with an already placed buffer of overlapping lifetime (the TFLite arena scheme).
// REQUIRES: alignment is a power of two; bytes >= 0; first_step <= last_step.
MemoryPlan PlanMemory(std::span<const BufferRequest> requests, int64_t alignment = 64);

// True if no two requests with overlapping lifetimes overlap in memory under `plan`
// and every buffer lies inside the arena (used by tests and debug checks).
bool IsValidMemoryPlan(std::span<const BufferRequest> requests, const MemoryPlan& plan);

// A 64-byte aligned arena of `bytes` (at least 64). ResourceExhausted when it cannot be
// allocated, naming the size and `whose` buffers they are ("these input sizes", "a
// subgraph").
StatusOr<std::shared_ptr<std::byte[]>> AllocateArena(int64_t bytes, const std::string& whose);

}  // namespace qtune::runtime
