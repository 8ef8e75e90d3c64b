// The flags `qtune run` and `qtune bench` share for running a `qtune tune` checkpoint:
// --checkpoint FILE [--no-verify] [--allow-weight-mismatch] (docs/tune.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tune/tune.h"

namespace qtune::cli {

struct CheckpointFlags {
  std::string checkpoint;  // empty: no checkpoint, the session comes from the model alone
  bool no_verify = false;
  bool allow_weight_mismatch = false;

  bool given() const { return !checkpoint.empty(); }
  tune::LoadTunedOptions LoadOptions() const {
    tune::LoadTunedOptions load;
    load.verify = !no_verify;
    load.allow_weight_mismatch = allow_weight_mismatch;
    return load;
  }
};

// Adds the three flags to `cmd`; `what` completes "--checkpoint: <what> the configuration a
// `qtune tune` checkpoint holds ...", e.g. "Run" or "Measure".
inline void AddCheckpointFlags(CLI::App* cmd, CheckpointFlags& flags, const std::string& what) {
  cmd->add_option("--checkpoint", flags.checkpoint,
                  what +
                      " the configuration a `qtune tune` checkpoint holds (its threads and "
                      "input sizes, its quantization decisions applied to MODEL's weights)");
  cmd->add_flag("--no-verify", flags.no_verify,
                "Do not check the checkpoint against its .sha256 file (unsafe)");
  cmd->add_flag("--allow-weight-mismatch", flags.allow_weight_mismatch,
                "Load a checkpoint tuned on other weights: rebuild from MODEL's weights, warn");
}

}  // namespace qtune::cli
