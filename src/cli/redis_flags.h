// The flags `qtune autotune` and `qtune tune` share for measuring on `qtune worker`s over
// Redis (docs/workers.md): --redis URL [--queue NAME] [--worker-wait S]. They take effect
// with --benchmark redis.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace qtune::cli {

// Adds the three flags to `cmd`, bound to the command's own option fields.
inline void AddRedisFlags(CLI::App* cmd, std::string& url, std::string& queue,
                          double& worker_wait_s) {
  cmd->add_option("--redis", url, "With --benchmark redis: redis://[:PASSWORD@]HOST[:PORT][/DB]");
  cmd->add_option("--queue", queue, "With --benchmark redis: the workers' queue")
      ->capture_default_str();
  cmd->add_option("--worker-wait", worker_wait_s,
                  "With --benchmark redis: seconds to wait for a worker at start")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
}

}  // namespace qtune::cli
