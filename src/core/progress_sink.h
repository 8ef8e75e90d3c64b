// Where progress goes. By default a ProgressBar (core/progress.h) draws on stderr; an
// embedding (the Python module) installs a sink that receives the bar's updates instead.
// Implemented in core/progress.cc; declared here so that changing the sink does not touch
// progress.h, which many files include.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace qtune {

struct ProgressUpdate {
  std::string_view label;  // "calibrating", "autotune: measuring", ...
  int64_t done = 0;        // steps done; 0 on the first update of a bar
  int64_t total = 0;       // steps expected; 0 when unknown
  bool final = false;      // the bar's last update (Finish(), or its destructor)
  // The text a bar prints in line mode ("calibrating: 40% (205/512) elapsed 0:01 eta 0:02",
  // plus " | note" and " (stopped early)" as there), for sinks that log lines.
  std::string_view line;
};

// Contract for a sink:
// - a bar that is constructed while a sink is set, with no explicit stream in its
//   ProgressOptions, sends its updates to the sink and prints nothing;
// - per bar: a first update with done 0, then updates at most once per percent (an
//   unknown total: when the count doubles) with `done` non-decreasing and below `total`,
//   then exactly one final update; notes (SetNote) ride on the next update;
// - a bar whose progress is disabled (SetProgressEnabled(false)) sends nothing;
// - the sink is called from any thread, possibly from several at once, with the bar's own
//   lock held (so one bar's updates arrive in order) and no other qtune lock: it must be
//   thread-safe, must not throw, and must not call back into the same bar;
// - the strings are borrowed for the duration of the call.
using ProgressSink = std::function<void(const ProgressUpdate& update)>;

// Replaces the process-wide sink; an empty function restores drawing on stderr for bars
// constructed from then on. Thread-safe. A bar constructed under a sink that is later
// cleared drops its remaining updates.
void SetProgressSink(ProgressSink sink);

}  // namespace qtune
