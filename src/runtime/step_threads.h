// How many threads one step of a plan runs on: steps too small to be worth splitting run
// on the calling thread alone.
//
// An OpenMP parallel region costs a fork and a join: 1-3 us per step on a 2-vCPU VM, more
// while another process holds a core. A small model is mostly such steps: Silero VAD at
// 2 threads spent 0.113 ms a run against 0.064 at 1, each of its 1032-element Adds 2-3 us
// instead of 0.5. Compile gives a step whose work is below the bounds below one thread
// (KernelRequest::threads = 1, so oneDNN primitives and native kernels are made for one),
// and PlanExecutor runs it with OpenMP's thread count set to 1 (PlanStep::threads).
#pragma once

#include <cstdint>

#include "runtime/kernels/kernel.h"

namespace qtune::runtime {

// A step runs on one thread when it moves fewer than kSmallStepElements elements and
// computes fewer than kSmallStepMacs multiply-adds.
inline constexpr int64_t kSmallStepElements = int64_t{1} << 18;
inline constexpr int64_t kSmallStepMacs = int64_t{1} << 18;

struct StepWork {
  int64_t elements = 0;  // of the computed inputs and of the outputs
  int64_t macs = 0;      // of a convolution or matrix product, else 0
};
StepWork WorkOf(const KernelRequest& request);

// True for a layout reorder of `elements` values small enough for one thread.
inline bool IsSmallReorder(int64_t elements) { return 2 * elements < kSmallStepElements; }

// The threads to make `request`'s kernel for when the plan has `threads`: 1 for a small
// step, else `threads`. Control flow and recurrent ops (whose bodies and time steps the
// estimate does not see) always get `threads`.
int StepThreads(const KernelRequest& request, int threads);

}  // namespace qtune::runtime
