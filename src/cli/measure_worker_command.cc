// qtune measure-worker (hidden): the child process InProcessBenchmark measures in; reads
// JSON requests on stdin and answers one JSON line each on stdout (measure/measure_worker.h).
// The library's own qtune-measure serves the same (measure/measure_executable.h).
#include "cli/commands.h"
#include "measure/measure_executable.h"

namespace qtune::cli {

void AddMeasureWorkerCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("measure-worker",
                                     "Serve latency measurements for `qtune autotune` (internal)");
  cmd->group("");  // hidden from --help
  cmd->callback(
      [exit_code] { *exit_code = measure::ServeMeasureWorkerOnStdio("qtune measure-worker"); });
}

}  // namespace qtune::cli
