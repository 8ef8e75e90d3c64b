// Where the measuring child process comes from. InProcessBenchmark and the Redis worker time
// models in a child that speaks measure_worker.h's protocol when run with the argument
// `measure-worker`: `qtune-measure` (src/measure/qtune_measure_main.cc), which the library
// owns and installs in <prefix>/libexec/qtune/, or the `qtune` CLI itself. So the C++ API and
// the Python module measure without a `qtune` executable on the PATH (issue 25).
#pragma once

#include <string>

#include "core/status.h"

namespace qtune::measure {

// The file name of the library's measuring executable.
inline constexpr char kMeasureExecutableName[] = "qtune-measure";

// The measuring executable to run, the first of:
//   1. `given` (options.qtune_binary, qtune_binary=): `qtune-measure` or `qtune`;
//   2. $QTUNE_BINARY;
//   3. beside the code that calls this (the program, or the shared object it is in, such as
//      the Python extension): DIR/../libexec/qtune/qtune-measure and DIR/qtune_bin/qtune-measure
//      (where pip puts it);
//   4. this build's own build/libexec/qtune/qtune-measure, then the configured install
//      prefix's libexec/qtune/qtune-measure;
//   5. `qtune` on the PATH.
// A given path (1, 2) that is not an executable file is FailedPrecondition naming where it
// came from; so is finding none, naming every place looked at and what to do.
StatusOr<std::string> FindMeasureExecutable(const std::string& given);

// The running program's path (/proc/self/exe); "qtune" when it cannot be read.
std::string ThisExecutable();

// Serves measure_worker.h's protocol on stdin/stdout: replies go to a private copy of stdout
// and fd 1 is pointed at stderr, so nothing the engine or a library prints can corrupt the
// reply stream. Returns the process exit code (0 at EOF, 1 when the streams cannot be set up).
int ServeMeasureWorkerOnStdio(const char* program_name);

}  // namespace qtune::measure
