// Content-addressed tensors for the Redis back end (docs/workers.md "How it works"): a
// candidate model is split into a small "skeleton" and its big tensors ("blobs"), so a tuner
// uploads each blob once, not the whole model for every candidate (issue 25).
//
// The skeleton is the model with every initializer (in the main graph and in subgraphs,
// If/Loop/Scan bodies) whose raw_data has at least `threshold` bytes turned into ONNX
// external data: data_location EXTERNAL, external_data {location "<sha256>.bin", offset 0,
// length N}, where <sha256> is the SHA-256 of those bytes. The skeleton names every blob by
// its hash, so the SHA-256 of the skeleton's bytes identifies the whole content. A skeleton
// saved next to its blobs is a standard ONNX model with external data (locations relative to
// the model's folder): qtune's loader, ONNX Runtime and TensorRT read it as is.
//
// A model smaller than `min_model_bytes` (1 MiB: it uploads in milliseconds), one with no
// such tensor, or bytes that do not parse as an ONNX model are kept as they are (identity:
// the SHA-256 of the file), as before: a benchmark command gets the tuner's file byte for
// byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace qtune::measure {

inline constexpr size_t kBlobThreshold = 64 * 1024;
inline constexpr size_t kSplitMinModelBytes = 1024 * 1024;

struct SplitModel {
  std::string bytes;   // the skeleton, or the model as it was when nothing was split
  std::string sha256;  // of `bytes`: the identity of the whole model
  // (sha256, bytes) of each distinct blob the skeleton names, in order of first use.
  std::vector<std::pair<std::string, std::string>> blobs;
};

// Never fails: a model it cannot parse, or one without big tensors, comes back as is.
SplitModel SplitModelBytes(std::string model_bytes, size_t threshold = kBlobThreshold,
                           size_t min_model_bytes = kSplitMinModelBytes);

struct BlobRef {
  std::string sha256;
  int64_t length = 0;
};

// Whether `location` is exactly 64 lowercase hex digits and ".bin".
bool IsBlobLocation(std::string_view location);

// The distinct blobs a skeleton names, for the worker, which trusts nothing it receives:
// InvalidArgument naming `source` and the tensor when an external location is anything but
// "<64 lowercase hex>.bin" (a hostile job must not reach other files: "../x.bin",
// "/etc/passwd"), when its offset is not 0 or its length is missing or not a number. Bytes
// that do not parse as a model give an empty list (the benchmark reports them as it did).
StatusOr<std::vector<BlobRef>> SkeletonBlobs(std::string_view bytes, const std::string& source);

}  // namespace qtune::measure
