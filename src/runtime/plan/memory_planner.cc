#include "runtime/plan/memory_planner.h"

#include <algorithm>
#include <new>
#include <numeric>

#include "core/check.h"

namespace qtune::runtime {
namespace {

bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

}  // namespace

MemoryPlan PlanMemory(std::span<const BufferRequest> requests, int64_t alignment) {
  QTUNE_CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0);
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });

  struct Placed {
    int64_t begin;
    int64_t end;
    size_t index;
  };
  std::vector<Placed> placed;  // kept sorted by begin offset
  for (size_t index : order) {
    const BufferRequest& request = requests[index];
    QTUNE_CHECK(request.bytes >= 0 && request.first_step <= request.last_step);
    int64_t size = AlignUp(std::max<int64_t>(request.bytes, 1), alignment);
    // Walk the placed buffers that are live at the same time, in offset order, and take
    // the first gap large enough.
    int64_t candidate = 0;
    for (const Placed& p : placed) {
      if (!LifetimesOverlap(requests[p.index], request)) continue;
      if (p.begin >= candidate + size) break;
      candidate = std::max(candidate, AlignUp(p.end, alignment));
    }
    plan.offsets[index] = candidate;
    plan.arena_bytes = std::max(plan.arena_bytes, candidate + size);
    Placed entry{candidate, candidate + size, index};
    placed.insert(
        std::upper_bound(placed.begin(), placed.end(), entry,
                         [](const Placed& a, const Placed& b) { return a.begin < b.begin; }),
        entry);
  }
  return plan;
}

bool IsValidMemoryPlan(std::span<const BufferRequest> requests, const MemoryPlan& plan) {
  if (plan.offsets.size() != requests.size()) return false;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (plan.offsets[i] < 0 || plan.offsets[i] + requests[i].bytes > plan.arena_bytes) return false;
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!LifetimesOverlap(requests[i], requests[j])) continue;
      if (requests[i].bytes == 0 || requests[j].bytes == 0) continue;
      bool disjoint = plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
                      plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
      if (!disjoint) return false;
    }
  }
  return true;
}

StatusOr<std::shared_ptr<std::byte[]>> AllocateArena(int64_t bytes, const std::string& whose) {
  size_t size = static_cast<size_t>(std::max<int64_t>(bytes, 64));
  auto* p = static_cast<std::byte*>(::operator new[](size, std::align_val_t(64), std::nothrow));
  if (p == nullptr) {
    return ResourceExhaustedError("cannot allocate the " + std::to_string(bytes >> 20) +
                                  " MiB of intermediate buffers " + whose + " need");
  }
  return std::shared_ptr<std::byte[]>(
      p, [](std::byte* q) { ::operator delete[](q, std::align_val_t(64)); });
}

}  // namespace qtune::runtime
