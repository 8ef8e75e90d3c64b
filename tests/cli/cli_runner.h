// Runs the qtune binary (QTUNE_BINARY, set by tests/cli/CMakeLists.txt) as a user would and
// captures what it prints and its exit code.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace qtune::testing {

struct CliResult {
  int exit_code = -1;  // -1: the binary did not start or did not exit normally
  std::string out;     // stdout, and stderr too when with_stderr
};

// `env` is prepended to the command line ("QTUNE_LOG_LEVEL=debug").
inline CliResult RunQtuneCli(const std::string& args, bool with_stderr = true,
                             const std::string& env = "") {
  std::string command = env + (env.empty() ? "" : " ") + std::string(QTUNE_BINARY) + " " + args +
                        (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) r.out.append(buffer, n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace qtune::testing
