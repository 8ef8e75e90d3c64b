// The flags every qtune command accepts, before or after the command name
// (`qtune --log-level debug quantize ...` = `qtune quantize ... --log-level debug`), their
// environment variables, and the shape of every error the command line itself reports.
// docs/cli.md documents the contract.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace qtune::cli {

struct GlobalFlags {
  std::string log_level;  // empty: not given (then QTUNE_LOG_LEVEL, else info)
  bool quiet = false;     // --quiet: warnings and errors only, no progress
  bool no_progress = false;
};

// Adds --log-level, --quiet and --no-progress to `app` and makes every subcommand added
// later accept them too (CLI11 fallthrough), and makes CLI11's own parse errors print as
// "qtune: error: ...". Call before adding the subcommands. `flags` must outlive the parse.
void AddGlobalFlags(CLI::App& app, GlobalFlags* flags);

// Sets the process-wide log level and progress switch from the parsed flags and the
// environment: --log-level, else --quiet (warning), else QTUNE_LOG_LEVEL, else info;
// progress is off with --quiet, --no-progress or QTUNE_NO_PROGRESS=1.
// Returns an error message for a bad QTUNE_LOG_LEVEL (a usage error), else nullopt.
std::optional<std::string> ApplyGlobalFlags(const GlobalFlags& flags);

// The first argument that names the command, skipping the global flags and their values;
// nullopt when there is none.
std::optional<std::string> CommandArgument(const std::vector<std::string>& args);

// For a command name that is not one of `commands`: "unknown command 'X'; did you mean
// 'Y'?" when one is close (edit distance), else the list of commands. nullopt when `name`
// is a command.
std::optional<std::string> UnknownCommandMessage(const std::string& name,
                                                 const std::vector<std::string>& commands);

// The default --threads of offline work (quantize, eval): every core this process may use
// (std::thread::hardware_concurrency), at least 1. `bench` and `run` keep an explicit
// default of 1 so figures stay comparable across machines.
int OfflineThreadsDefault();

}  // namespace qtune::cli
