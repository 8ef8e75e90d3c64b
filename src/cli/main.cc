// The qtune command-line tool: one binary, one subcommand per job.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/global_flags.h"
#include "core/logging.h"

int main(int argc, char** argv) {
  using namespace qtune::cli;
  CLI::App app{"qtune: run, quantize and tune ONNX models on the CPU"};
  app.set_version_flag("--version", "qtune 0.1.0");
  app.require_subcommand(1);
  GlobalFlags global_flags;
  AddGlobalFlags(app, &global_flags);  // before the subcommands: they inherit the flags

  int exit_code = kExitOk;
  AddInspectCommand(app, &exit_code);
  AddRunCommand(app, &exit_code);
  AddBenchCommand(app, &exit_code);
  AddQuantizeCommand(app, &exit_code);
  AddEvalCommand(app, &exit_code);
  AddAutotuneCommand(app, &exit_code);
  AddTuneCommand(app, &exit_code);
  AddReportCommand(app, &exit_code);
  AddMeasureWorkerCommand(app, &exit_code);
  AddWorkerCommand(app, &exit_code);

  std::optional<std::string> env_error;
  app.parse_complete_callback([&] {
    env_error = ApplyGlobalFlags(global_flags);
    // A bad QTUNE_LOG_LEVEL stops before any command runs.
    if (env_error.has_value()) throw CLI::ValidationError(*env_error, kExitUsage);
  });
  // A misspelled command gets a suggestion, not CLI11's "argument was not expected".
  if (auto command = CommandArgument(std::vector<std::string>(argv + 1, argv + argc))) {
    std::vector<std::string> visible;  // hidden commands (empty group) are not suggested
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->check_name(*command);
      if (!sub->get_group().empty()) visible.push_back(sub->get_name());
    }
    if (!known) {
      std::fprintf(stderr, "qtune: error: %s\n", UnknownCommandMessage(*command, visible)->c_str());
      return kExitUsage;
    }
  }
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
