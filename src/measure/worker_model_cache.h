// The `qtune worker`'s model cache: models by SHA-256 (<dir>/<sha256>.onnx), so the
// incumbent a tuner names in every job is fetched from Redis once, and the big tensors
// skeleton models name (model_blobs.h) as <dir>/<sha256>.bin next to them, where the ONNX
// external-data rule (locations relative to the model's folder) finds them.
//
// The cache is trusted for nothing: the folder must be private (core/private_dir.h: owned
// by the worker's user, not writable by group or others; created 0700), and every file is
// hashed again when a job uses it. A file whose bytes do not have its name's SHA-256 (put
// there by someone else, or damaged) is removed with a warning and fetched again, so a
// planted file can never be measured in place of a candidate.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "core/status.h"

namespace qtune::measure {

// $XDG_CACHE_HOME/qtune/worker-<name>, else $HOME/.cache/qtune/worker-<name>: per user,
// never the shared temporary folder. FailedPrecondition when neither variable is set.
StatusOr<std::string> DefaultWorkerCacheDir(const std::string& worker_name);

class WorkerModelCache {
 public:
  // Creates `dir` (0700) or checks that it is private; FailedPrecondition naming the
  // folder and what to do otherwise.
  static StatusOr<WorkerModelCache> Open(const std::string& dir, const std::string& worker_name);

  // The path of model `sha256` when the cache holds it with the right bytes (its time of
  // use is refreshed); nullopt when it is missing or was removed for a wrong SHA-256.
  std::optional<std::string> Lookup(const std::string& sha256);
  // Writes `bytes` (atomically) as model `sha256`. REQUIRES: Sha256Hex(bytes) == sha256.
  StatusOr<std::string> Store(const std::string& sha256, const std::string& bytes);
  // Removes the least recently used models beyond `max_models`, never those in `keep`.
  void Prune(const std::set<std::string>& keep, size_t max_models);
  // The same for blobs (<sha256>.bin), checked against their SHA-256 on every lookup.
  std::optional<std::string> LookupBlob(const std::string& sha256);
  StatusOr<std::string> StoreBlob(const std::string& sha256, const std::string& bytes);
  void PruneBlobs(const std::set<std::string>& keep, size_t max_blobs);

  const std::string& dir() const { return dir_; }

 private:
  WorkerModelCache(std::string dir, std::string worker_name)
      : dir_(std::move(dir)), worker_name_(std::move(worker_name)) {}
  std::string PathOf(const std::string& sha256, const char* extension = ".onnx") const;
  // `path` when it is a plain file whose bytes hash to `sha256`; else removed (warning).
  std::optional<std::string> Verified(const std::string& path, const std::string& sha256,
                                      const char* what);
  void PruneFiles(const char* extension, const std::set<std::string>& keep, size_t max_files);

  std::string dir_;
  std::string worker_name_;  // for log lines
};

}  // namespace qtune::measure
