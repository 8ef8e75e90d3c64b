// How many of a session's intra-op threads to use for one run.
//
// qtune's kernels run on OpenMP (Debian's oneDNN is built for it). An OpenMP parallel
// region ends in a barrier that waits for every thread of the team, so when another
// process holds a core, each of the hundreds of regions of a run waits for the thread
// that shares that core to get its time slice back: a 2-thread run can take 10-100x its
// quiet time. ONNX Runtime's pool degrades less because its calling thread takes the work
// a descheduled worker has not started. qtune gets the same effect one level up: under
// ThreadPolicy::kAdaptive a session runs with only as many threads as there are cores
// that other processes leave free (at least 1), each thread count with a plan compiled
// for it (oneDNN primitives keep the thread count they were created with).
//
// "Other processes" is measured, not guessed: the busy time of the CPUs this process may
// run on (/proc/stat) minus this process's own CPU time (getrusage), over a window of at
// least kLoadWindowMs, so qtune's own spinning threads never count against it.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace qtune::runtime {

enum class ThreadPolicy {
  kFixed,     // always the session's thread count (reproducible timings, exact partitioning)
  kAdaptive,  // the session's count, less the cores other processes keep busy (>= 1)
};

const char* ThreadPolicyName(ThreadPolicy policy);  // "fixed", "adaptive"
// "fixed" or "adaptive"; InvalidArgument naming the accepted values otherwise.
StatusOr<ThreadPolicy> ParseThreadPolicy(std::string_view name);

// The default for user-facing sessions (CLI, C++ API, Python): QTUNE_THREAD_POLICY when it
// is set to a valid name, else kAdaptive. An invalid value is reported by
// ThreadPolicyFromEnvironment's status so callers can name the variable.
StatusOr<ThreadPolicy> ThreadPolicyFromEnvironment();

inline constexpr int kLoadWindowMs = 100;

// Cores kept busy by other processes over the last window (0 when /proc is unreadable),
// and the number of CPUs this process may run on. Process-wide, thread-safe; a call
// samples /proc at most once per kLoadWindowMs and otherwise returns the last estimate.
struct CpuLoad {
  double other_busy_cores = 0.0;
  int allowed_cpus = 1;
};
CpuLoad CurrentCpuLoad();

// The thread count for the next run of a session of `requested` threads. kFixed or
// requested <= 1: `requested`. kAdaptive: requested capped by the free cores, where a core
// counts as taken when other processes use at least 0.6 of it; never below 1.
int ThreadsForRun(int requested, ThreadPolicy policy);
// The same decision for a given load (what ThreadsForRun applies; unit-tested).
int ThreadsForLoad(int requested, const CpuLoad& load);

}  // namespace qtune::runtime
