// Reading and writing numpy's .npz archives (docs/formats/npy-npz.md): a zip file whose
// members are .npy files, as written by np.savez / np.savez_compressed.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace qtune {

// A named array: the key is the member name without ".npy" ("x.npy" -> "x").
using NpzEntries = std::vector<std::pair<std::string, Tensor>>;

// Reads every .npy member of the archive at `path`, in archive order, into owned tensors.
// Stored and deflated members are supported. Each member's uncompressed size is capped
// (kMaxTensorBytes plus the largest header) before memory is committed to it; members not
// ending in ".npy" are skipped with a warning. Errors name the archive and the member.
StatusOr<NpzEntries> ReadNpz(const std::string& path);

struct NpzWriteOptions {
  bool compress = false;  // false: stored members, like np.savez; true: np.savez_compressed
};

// Writes `entries` as "<key>.npy" members to `path`: first to a temporary file in the same
// folder, then fsync and rename, so a crash leaves the old file or the new one. Keys must be
// non-empty and unique; every tensor must be numpy-representable (see SerializeNpy).
Status WriteNpz(const std::string& path, const NpzEntries& entries,
                const NpzWriteOptions& options = {});

}  // namespace qtune
