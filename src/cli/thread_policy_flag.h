// --thread-policy adaptive|fixed, shared by `qtune run` and `qtune bench` (docs/run.md,
// "Threads"). The default comes from QTUNE_THREAD_POLICY, else adaptive.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/status.h"
#include "runtime/thread_budget.h"

namespace qtune::cli {

inline void AddThreadPolicyFlag(CLI::App* cmd, std::string& policy) {
  cmd->add_option("--thread-policy", policy,
                  "adaptive: run on fewer threads while other processes keep cores busy "
                  "(default; QTUNE_THREAD_POLICY sets it); fixed: always --threads");
}

// The flag's value, or the environment's default when the flag was not given.
inline StatusOr<runtime::ThreadPolicy> ResolveThreadPolicy(const std::string& flag) {
  if (flag.empty()) return runtime::ThreadPolicyFromEnvironment();
  StatusOr<runtime::ThreadPolicy> policy = runtime::ParseThreadPolicy(flag);
  if (!policy.ok()) return InvalidArgumentError("--thread-policy: " + policy.status().message());
  return policy;
}

}  // namespace qtune::cli
