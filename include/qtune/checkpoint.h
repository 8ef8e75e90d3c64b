// qtune/checkpoint.h: deploy and read the checkpoints qtune::Tune writes (MODEL.qtc and
// MODEL.qtc.sha256; docs/formats/checkpoint.md).
//
//   auto session = qtune::LoadTuned("model.onnx", "model.qtc");   // a qtune::Session
//   auto outputs = (*session)->Run(inputs);
//
// Contract: the archive is checked against its .sha256 file before anything in it is read
// (DataLoss naming both files when it is missing or differs; `verify = false` skips the
// check, as --no-verify does, and logs a warning). A checkpoint holds no weights: LoadTuned
// checks the model's weights against the digests it holds (FailedPrecondition naming the
// first differing weight, unless allow_weight_mismatch), applies the stored decisions
// (candidate, threads, quantization plan) to them and warms the session up on the stored
// input sizes. Unimplemented for a checkpoint from a newer qtune.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "session.h"
#include "status.h"

namespace qtune {

struct LoadTunedOptions {
  bool verify = true;                  // check <checkpoint>.sha256 first
  bool allow_weight_mismatch = false;  // other weights than it was tuned on: rebuild, warn
  // Where unpacked copies are kept. Empty: $QTUNE_CACHE_DIR/checkpoints, else
  // $XDG_CACHE_HOME/qtune/checkpoints, else ~/.cache/qtune/checkpoints.
  std::string cache_dir;
};

StatusOr<std::unique_ptr<Session>> LoadTuned(const std::string& model_path,
                                             const std::string& checkpoint_path,
                                             const LoadTunedOptions& options = {});

// What a checkpoint holds, read without a model and without unpacking it (as
// `qtune inspect MODEL.qtc`).
struct CheckpointInfo {
  int format_version = 0;
  std::string qtune_version;  // of the qtune that wrote it
  std::string created_utc;    // ISO 8601
  std::string candidate;      // the chosen configuration
  int threads = 1;
  std::map<std::string, std::vector<int64_t>> input_sizes;  // measured, and warmed up on load
  int64_t weights_fingerprinted = 0;                        // how many weights it holds a digest of
  std::string weights_sha256;                               // digest over all of them
  std::string manifest_json;  // manifest.json as stored (its "tuning" block in full)
};

struct ReadCheckpointOptions {
  bool verify = true;  // as LoadTunedOptions::verify
};

StatusOr<CheckpointInfo> ReadCheckpoint(const std::string& checkpoint_path,
                                        const ReadCheckpointOptions& options = {});

}  // namespace qtune
