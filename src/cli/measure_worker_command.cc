// qtune measure-worker (hidden): the child process InProcessBenchmark measures in; reads
// JSON requests on stdin and answers one JSON line each on stdout (autotune/measure_worker.h).
#include <unistd.h>

#include <cstdio>

#include "autotune/measure_worker.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"

namespace qtune::cli {
namespace {

// Replies go to a private copy of stdout, and fd 1 is pointed at stderr, so nothing the
// engine or a library prints can corrupt the reply stream.
int ServeMeasureWorker() {
  int reply_fd = dup(STDOUT_FILENO);
  if (reply_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("qtune measure-worker: cannot set up the reply stream");
    return kExitFailure;
  }
  std::FILE* replies = fdopen(reply_fd, "w");
  if (replies == nullptr) {
    std::perror("qtune measure-worker: cannot open the reply stream");
    return kExitFailure;
  }
  int code = autotune::RunMeasureWorker(stdin, replies);
  std::fclose(replies);
  return code;
}

}  // namespace

void AddMeasureWorkerCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("measure-worker",
                                     "Serve latency measurements for `qtune autotune` (internal)");
  cmd->group("");  // hidden from --help
  cmd->callback([exit_code] { *exit_code = ServeMeasureWorker(); });
}

}  // namespace qtune::cli
