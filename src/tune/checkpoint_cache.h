// Internal to tune/checkpoint.cc: the unpacked copies of checkpoints,
// <cache_dir>/<archive sha256>/, each with a completion marker that lists its files and
// their digests. A folder is used only when the marker and every file verify against the
// digests of the archive's own entries (computed from the verified archive, never taken
// from the cache: a folder planted with a matching marker is not trusted); it is built in
// a temporary folder beside it and renamed into place, so a crash never leaves a
// half-written folder under the final name. The cache folder itself must be private
// (core/private_dir.h), checked by LoadCheckpoint.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/status.h"
#include "tune/checkpoint_archive.h"

namespace qtune::tune::internal {

// Name of the completion marker inside an unpacked folder (entry names cannot start
// with '.', so it never collides with an entry).
inline constexpr const char* kUnpackedMarkerName = ".qtune-unpacked.json";

// Entry name -> SHA-256 hex of every entry of `reader`'s archive, read (decompressed) but
// not written anywhere. Errors as UnpackToCache's for the same entries.
StatusOr<std::map<std::string, std::string>> ArchiveEntryDigests(TarGzReader& reader);

// Entry name -> SHA-256 hex of the files in `dir`, when `dir` is a complete, undamaged
// unpacked copy of the archive with digest `archive_sha256` whose entries have the digests
// `expected` (ArchiveEntryDigests). NotFound when `dir` does not exist; DataLoss saying
// what is wrong otherwise (not private to the user, no marker, a file missing, changed,
// extra, or other than the archive's).
StatusOr<std::map<std::string, std::string>> VerifyUnpacked(
    const std::string& dir, const std::string& archive_sha256,
    const std::map<std::string, std::string>& expected);

// Unpacks every entry of `reader` into a temporary folder under `cache_dir`, passes the
// manifest.json bytes to `check_manifest`, writes the marker, and renames the folder to
// <cache_dir>/<archive_sha256> (replacing a damaged one). On any failure the temporary
// folder is removed. Returns the entry digests. `source` names the archive in errors.
StatusOr<std::map<std::string, std::string>> UnpackToCache(
    TarGzReader& reader, const std::string& source, const std::string& cache_dir,
    const std::string& archive_sha256,
    const std::function<Status(const std::string& manifest_bytes)>& check_manifest);

}  // namespace qtune::tune::internal
