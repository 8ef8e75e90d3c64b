#include "cli/global_flags.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/logging.h"
#include "core/progress.h"

namespace qtune::cli {
namespace {

// Levenshtein distance; command names are short.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

bool EnvFlagSet(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return false;
  const std::string v = value;
  return !v.empty() && v != "0" && v != "false" && v != "no";
}

}  // namespace

void AddGlobalFlags(CLI::App& app, GlobalFlags* flags) {
  // Inherited by the subcommands added after this call.
  app.fallthrough();
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    std::string message = "qtune: error: " + std::string(e.what()) + "\n";
    // The command the error is about: the one selected on the command line, if any.
    std::string command;
    for (const CLI::App* sub : failed->get_subcommands()) command = " " + sub->get_name();
    message += "Run 'qtune" + command + " --help' for the flags.\n";
    return message;
  });
  app.add_option("--log-level", flags->log_level,
                 "Messages to show on stderr: debug, info (default), warning, error, off "
                 "(also QTUNE_LOG_LEVEL)")
      ->check(CLI::IsMember({"debug", "info", "warning", "warn", "error", "off"}));
  app.add_flag("-q,--quiet", flags->quiet, "Only warnings and errors on stderr, no progress");
  app.add_flag("--no-progress", flags->no_progress,
               "No progress lines on stderr (also QTUNE_NO_PROGRESS=1)");
}

std::optional<std::string> ApplyGlobalFlags(const GlobalFlags& flags) {
  LogLevel level = LogLevel::kInfo;
  if (!flags.log_level.empty()) {
    level = *ParseLogLevel(flags.log_level);  // the flag's check validated it
  } else if (flags.quiet) {
    level = LogLevel::kWarning;
  } else if (const char* env = std::getenv("QTUNE_LOG_LEVEL"); env != nullptr && *env != '\0') {
    auto parsed = ParseLogLevel(env);
    if (!parsed.ok())
      return "QTUNE_LOG_LEVEL=" + std::string(env) + ": " + parsed.status().message();
    level = *parsed;
  }
  SetLogLevel(level);
  SetProgressEnabled(!(flags.quiet || flags.no_progress || EnvFlagSet("QTUNE_NO_PROGRESS")));
  return std::nullopt;
}

std::optional<std::string> CommandArgument(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--log-level") {
      ++i;  // its value
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    return arg;
  }
  return std::nullopt;
}

std::optional<std::string> UnknownCommandMessage(const std::string& name,
                                                 const std::vector<std::string>& commands) {
  if (std::find(commands.begin(), commands.end(), name) != commands.end()) return std::nullopt;
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& command : commands) {
    const size_t d = EditDistance(name, command);
    if (d < best_distance) best_distance = d, best = command;
  }
  std::string message = "unknown command '" + name + "'";
  // Close: a typo or two, not a different word.
  if (!best.empty() && best_distance <= std::max<size_t>(2, best.size() / 3)) {
    return message + "; did you mean '" + best + "'?";
  }
  message += "; the commands are";
  for (size_t i = 0; i < commands.size(); ++i) message += (i ? ", " : " ") + commands[i];
  return message + " (qtune --help)";
}

int OfflineThreadsDefault() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(std::min(cores, 256u));
}

}  // namespace qtune::cli
