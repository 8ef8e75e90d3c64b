// The checkpoint file layer of `qtune tune`: one gzip-compressed tar archive (MODEL.qtc)
// holding manifest.json plus the extra files the tuner hands over, and MODEL.qtc.sha256
// beside it. docs/formats/checkpoint.md is the format's reference.
//
// WEIGHTS ARE NEVER STORED. This layer writes exactly the manifest and files it is given,
// nothing else; the manifest carries only a WeightFingerprint (digests) of the weights the
// tuning was done with. Callers must not put weights (or quantized copies) into `files`:
// the model is supplied again at load time and checked against the fingerprint.
//
// Trust model: the archive is verified against its .sha256 file before any entry is read,
// and unpacking refuses anything but plain files with safe names and bounded sizes. The
// unpacked cache folder is checked for damage (half-written or changed files), not defended
// against someone who can write to it: it is as trusted as the user's own files.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "tune/weight_fingerprint.h"

namespace qtune::tune {

// The newest manifest format_version this build reads and the one it writes.
inline constexpr int kCheckpointFormatVersion = 1;
// Name of the manifest entry; the first entry of every archive.
inline constexpr const char* kManifestEntryName = "manifest.json";

struct CheckpointManifest {
  int format_version = kCheckpointFormatVersion;
  std::string qtune_version;  // the qtune that wrote it, e.g. "0.1.0"
  std::string created_utc;    // ISO 8601, e.g. "2026-09-01T12:00:00Z"
  WeightFingerprint weights;  // of the model as loaded, before any pass
  nlohmann::json tuning;      // opaque to this layer: what the tuner decided
};

// A manifest with format_version, qtune_version (this build) and created_utc (now) filled.
CheckpointManifest NewCheckpointManifest();

nlohmann::json ManifestToJson(const CheckpointManifest& manifest);
// DataLoss naming the field when one is missing or mistyped; Unimplemented naming both
// versions when format_version is newer than kCheckpointFormatVersion. `where` prefixes the
// messages (e.g. "'model.qtc' manifest.json").
StatusOr<CheckpointManifest> ManifestFromJson(const nlohmann::json& json, const std::string& where);

// OK if `name` may be a checkpoint entry: 1..100 characters of [A-Za-z0-9._-], starting with
// a letter or digit (so no ".", "..", hidden files or folders). InvalidArgument otherwise.
Status ValidateEntryName(const std::string& name);

struct CheckpointContents {
  CheckpointManifest manifest;
  // Extra files by entry name (ValidateEntryName; not "manifest.json"), e.g. "plan.json",
  // "samples.npz".
  std::map<std::string, std::string> files;
};

// Writes `path` (the archive) atomically (temp file + rename), then `<path>.sha256`
// ("<hex>  <basename>\n", sha256sum format) atomically after it. Entries: manifest.json,
// then `files` in name order; fixed mtime, owner and mode, and a gzip header without a
// timestamp, so equal contents give byte-identical archives. InvalidArgument for a bad
// entry name. A crash leaves the previous checkpoint, or a new archive whose hash file is
// missing or stale: loading refuses that until saved again.
Status SaveCheckpoint(const std::string& path, const CheckpointContents& contents);

struct LoadCheckpointOptions {
  // Check the archive against `<path>.sha256` before reading it (qtune's --no-verify
  // clears this; loading then logs a warning).
  bool verify = true;
  // Where unpacked copies live, one folder per archive digest. Empty: $QTUNE_CACHE_DIR/
  // checkpoints, else $XDG_CACHE_HOME/qtune/checkpoints, else $HOME/.cache/qtune/checkpoints.
  std::string cache_dir;
  int64_t max_entry_bytes = int64_t{256} << 20;  // per entry, uncompressed
  int64_t max_entries = 1000;
  int64_t max_total_bytes = int64_t{1} << 30;    // all entries together, uncompressed
  int64_t max_archive_bytes = int64_t{1} << 30;  // the .qtc file itself
};

// The cache folder LoadCheckpoint would use for `options` (resolving the defaults above).
// FailedPrecondition if none can be found (no variable set and no $HOME).
StatusOr<std::string> ResolveCheckpointCacheDir(const LoadCheckpointOptions& options);

struct LoadedCheckpoint {
  CheckpointManifest manifest;
  std::string unpacked_dir;    // <cache_dir>/<archive_sha256>; lives until the cache is cleared
  bool reused_cache = false;   // true: an earlier load's unpacked copy verified and was used
  std::string archive_sha256;  // of the .qtc file
  // Entry name -> SHA-256 hex of every unpacked file, manifest.json included.
  std::map<std::string, std::string> file_sha256;

  // Contents of the unpacked entry `name`, checked against file_sha256 (DataLoss if the
  // cached file changed since the load). NotFound naming the entries present.
  StatusOr<std::string> ReadFile(const std::string& name) const;
};

// Opens a checkpoint, in this order: reads the archive (at most max_archive_bytes); with
// options.verify, checks it against `<path>.sha256` (missing or different: DataLoss naming
// both files and --no-verify) before looking at any entry; reuses `<cache>/<sha256>/` when
// its completion marker and every file in it verify, else unpacks into a temporary folder
// (refusing absolute or `..` paths, links, devices, folders, names outside
// ValidateEntryName, duplicates, and sizes or counts over the caps: DataLoss naming the
// entry), checks the manifest (ManifestFromJson) and renames the folder into place.
// Nothing is left in the cache when a load fails.
StatusOr<LoadedCheckpoint> LoadCheckpoint(const std::string& path,
                                          const LoadCheckpointOptions& options);

// The manifest alone (for `qtune inspect MODEL.qtc`): same verification and entry checks as
// LoadCheckpoint, reads only manifest.json, never touches the cache.
StatusOr<CheckpointManifest> ReadManifestOnly(const std::string& path,
                                              const LoadCheckpointOptions& options);

// True when `path` looks like a checkpoint rather than a model: a .qtc name, or a file that
// starts with gzip's magic bytes (an ONNX model never does). Reads 2 bytes; false when
// the file cannot be read.
bool LooksLikeCheckpoint(const std::string& path);

}  // namespace qtune::tune
