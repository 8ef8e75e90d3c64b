// The qtune command-line tool: one binary, one subcommand per job.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "core/logging.h"

int main(int argc, char** argv) {
  using namespace qtune::cli;
  CLI::App app{"qtune: run, quantize and tune ONNX models on the CPU"};
  app.set_version_flag("--version", "qtune 0.1.0");
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "Messages to show on stderr")
      ->check(CLI::IsMember({"debug", "info", "warning", "error", "off"}))
      ->capture_default_str();

  int exit_code = kExitOk;
  AddInspectCommand(app, &exit_code);
  AddRunCommand(app, &exit_code);
  AddBenchCommand(app, &exit_code);
  AddQuantizeCommand(app, &exit_code);
  AddEvalCommand(app, &exit_code);
  AddAutotuneCommand(app, &exit_code);
  AddTuneCommand(app, &exit_code);
  AddMeasureWorkerCommand(app, &exit_code);

  app.parse_complete_callback([&] {
    qtune::SetLogLevel(*qtune::ParseLogLevel(log_level));  // the check above validated it
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {
    // Errors are Status values; an exception reaching here is a bug, reported, not a crash.
    std::fprintf(stderr, "qtune: error: internal error: %s\n", e.what());
    return kExitFailure;
  } catch (...) {
    std::fprintf(stderr, "qtune: error: internal error: unknown exception\n");
    return kExitFailure;
  }
  return exit_code;
}
