// Each qtune subcommand adds itself to the CLI11 app. Its callback stores the process exit
// code in `*exit_code` (see exit_codes.h); the app object and exit_code outlive the parse.
#pragma once

#include <CLI/CLI.hpp>

namespace qtune::cli {

void AddInspectCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddBenchCommand(CLI::App& app, int* exit_code);
void AddQuantizeCommand(CLI::App& app, int* exit_code);
void AddEvalCommand(CLI::App& app, int* exit_code);
void AddAutotuneCommand(CLI::App& app, int* exit_code);
void AddTuneCommand(CLI::App& app, int* exit_code);
// qtune report: an HTML page of an autotune, tune or quantize run (report/report.h).
void AddReportCommand(CLI::App& app, int* exit_code);
// Hidden: the child process InProcessBenchmark measures in (measure/measure_worker.h).
void AddMeasureWorkerCommand(CLI::App& app, int* exit_code);
// qtune worker: serves measurement jobs from Redis Streams (measure/redis_worker.h).
void AddWorkerCommand(CLI::App& app, int* exit_code);

}  // namespace qtune::cli
