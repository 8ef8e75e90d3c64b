// SaveCheckpoint, LoadCheckpoint and ReadManifestOnly: the hash file, verification order
// and the unpacked cache (docs/formats/checkpoint.md).
#include "tune/checkpoint.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "core/file_io.h"
#include "core/json_limits.h"
#include "core/logging.h"
#include "core/private_dir.h"
#include "core/sha256.h"
#include "tune/checkpoint_archive.h"
#include "tune/checkpoint_cache.h"

namespace qtune::tune {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// The digest in a one-line sha256sum file: "<64 hex>  <name>" or "<64 hex> *<name>".
// The name is not compared: renaming both files together is allowed.
StatusOr<std::string> ParseHashFile(const std::string& text, const std::string& hash_path) {
  std::string line = text.substr(0, text.find('\n'));
  std::string hex = line.substr(0, 64);
  for (char& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool ok = line.size() > 66 && std::all_of(hex.begin(), hex.end(), IsHexDigit) &&
            line[64] == ' ' && (line[65] == ' ' || line[65] == '*');
  if (!ok) {
    return DataLossError("hash file '" + hash_path +
                         "' is not in sha256sum format ('<64 hex digits>  <file name>'); "
                         "save the checkpoint again, or pass --no-verify to skip the check");
  }
  return hex;
}

struct ArchiveBytes {
  std::string bytes;
  std::string sha256;
};

// Reads the archive whole (so what is verified is exactly what is unpacked) and, with
// options.verify, checks it against <path>.sha256.
StatusOr<ArchiveBytes> ReadVerifiedArchive(const std::string& path,
                                           const LoadCheckpointOptions& options) {
  StatusOr<std::string> bytes = qtune::ReadFile(path, options.max_archive_bytes);
  if (!bytes.ok()) return bytes.status().WithContext("cannot read checkpoint");
  ArchiveBytes archive{std::move(*bytes), ""};
  archive.sha256 = Sha256Hex(archive.bytes);
  const std::string hash_path = path + ".sha256";
  if (!options.verify) {
    QTUNE_LOG_WARNING(
        "NOT VERIFYING checkpoint '{}' against '{}' (--no-verify): a damaged or tampered "
        "archive will not be detected; use this only for files you trust",
        path, hash_path);
    return archive;
  }
  StatusOr<std::string> text = qtune::ReadFile(hash_path, 4096);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return DataLossError("hash file '" + hash_path + "' is missing, so checkpoint '" + path +
                           "' cannot be verified; copy the .sha256 file along with the "
                           "checkpoint, or pass --no-verify to skip the check (unsafe)");
    }
    return DataLossError("cannot read hash file '" + hash_path + "' of checkpoint '" + path +
                         "': " + text.status().message());
  }
  ASSIGN_OR_RETURN(std::string recorded, ParseHashFile(*text, hash_path));
  if (recorded != archive.sha256) {
    return DataLossError("checkpoint '" + path + "' does not match its hash file '" + hash_path +
                         "' (sha256 " + archive.sha256 + ", recorded " + recorded +
                         "): the archive was changed or damaged after it was saved; save it "
                         "again, or pass --no-verify to skip the check (unsafe)");
  }
  return archive;
}

internal::EntryLimits LimitsOf(const LoadCheckpointOptions& options) {
  return {options.max_entry_bytes, options.max_entries, options.max_total_bytes};
}

std::string ManifestWhere(const std::string& path) {
  return "checkpoint '" + path + "' " + kManifestEntryName;
}

StatusOr<CheckpointManifest> ParseManifestBytes(const std::string& bytes, const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json json, ParseUntrustedJson(bytes, ManifestWhere(path)));
  return ManifestFromJson(json, ManifestWhere(path));
}

}  // namespace

Status SaveCheckpoint(const std::string& path, const CheckpointContents& contents) {
  for (const auto& [name, data] : contents.files) {
    if (Status s = ValidateEntryName(name); !s.ok()) {
      return InvalidArgumentError("cannot save checkpoint '" + path + "': " + s.message());
    }
    if (name == kManifestEntryName) {
      return InvalidArgumentError("cannot save checkpoint '" + path + "': '" + name +
                                  "' is reserved for the manifest");
    }
  }
  std::string manifest = DumpJson(ManifestToJson(contents.manifest), 2) + "\n";
  std::vector<std::pair<std::string, std::string_view>> entries;
  entries.emplace_back(kManifestEntryName, manifest);
  for (const auto& [name, data] : contents.files) entries.emplace_back(name, data);
  ASSIGN_OR_RETURN(std::string archive, internal::WriteTarGz(entries));
  RETURN_IF_ERROR(WriteFileAtomic(path, archive));
  // After the archive: a crash in between leaves a stale hash file, which load refuses.
  return WriteFileAtomic(path + ".sha256", Sha256Hex(archive) + "  " + BaseName(path) + "\n");
}

StatusOr<std::string> ResolveCheckpointCacheDir(const LoadCheckpointOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  if (std::string d = env("QTUNE_CACHE_DIR"); !d.empty()) return d + "/checkpoints";
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/qtune/checkpoints";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/qtune/checkpoints";
  return FailedPreconditionError(
      "no folder to unpack checkpoints into: set QTUNE_CACHE_DIR (or XDG_CACHE_HOME or HOME)");
}

StatusOr<std::string> LoadedCheckpoint::ReadFile(const std::string& name) const {
  auto it = file_sha256.find(name);
  if (it == file_sha256.end()) {
    std::string names;
    for (const auto& [n, sha] : file_sha256) names += (names.empty() ? "" : ", ") + n;
    return NotFoundError("checkpoint (unpacked at '" + unpacked_dir + "') has no entry '" + name +
                         "'; it holds: " + names);
  }
  const std::string file = unpacked_dir + "/" + name;
  ASSIGN_OR_RETURN(std::string bytes, qtune::ReadFile(file));
  if (Sha256Hex(bytes) != it->second) {
    return DataLossError("unpacked checkpoint file '" + file +
                         "' changed since it was loaded; load the checkpoint again");
  }
  return bytes;
}

StatusOr<LoadedCheckpoint> LoadCheckpoint(const std::string& path,
                                          const LoadCheckpointOptions& options) {
  ASSIGN_OR_RETURN(ArchiveBytes archive, ReadVerifiedArchive(path, options));
  ASSIGN_OR_RETURN(std::string cache_dir, ResolveCheckpointCacheDir(options));
  // Files are read back from the cache: only its user may be able to write there.
  RETURN_IF_ERROR(EnsurePrivateDir(
      cache_dir, {"the checkpoint cache",
                  "set QTUNE_CACHE_DIR to a folder only you can write (created 0700)"}));
  LoadedCheckpoint loaded;
  loaded.archive_sha256 = archive.sha256;
  loaded.unpacked_dir = cache_dir + "/" + archive.sha256;

  StatusOr<std::map<std::string, std::string>> reused = NotFoundError("not unpacked yet");
  if (struct stat st; ::lstat(loaded.unpacked_dir.c_str(), &st) == 0) {
    // Checked against the entries of the verified archive, not against what the cache says.
    internal::TarGzReader digest_reader(archive.bytes, path, LimitsOf(options));
    ASSIGN_OR_RETURN(auto expected, internal::ArchiveEntryDigests(digest_reader));
    reused = internal::VerifyUnpacked(loaded.unpacked_dir, archive.sha256, expected);
  }
  if (reused.ok()) {
    loaded.reused_cache = true;
    loaded.file_sha256 = std::move(*reused);
  } else {
    if (reused.status().code() != StatusCode::kNotFound) {
      QTUNE_LOG_WARNING("unpacked copy of checkpoint '{}' is damaged ({}); unpacking again", path,
                        reused.status().message());
    }
    internal::TarGzReader reader(archive.bytes, path, LimitsOf(options));
    // The manifest is checked before the unpacked folder is committed, so a checkpoint
    // refused for its manifest (e.g. a newer format_version) leaves nothing in the cache.
    auto check_manifest = [&](const std::string& bytes) {
      return ParseManifestBytes(bytes, path).status();
    };
    ASSIGN_OR_RETURN(loaded.file_sha256, internal::UnpackToCache(reader, path, cache_dir,
                                                                 archive.sha256, check_manifest));
  }
  StatusOr<std::string> manifest = loaded.ReadFile(kManifestEntryName);
  if (!manifest.ok()) {
    if (manifest.status().code() == StatusCode::kNotFound) {
      return DataLossError("checkpoint '" + path + "' has no " + kManifestEntryName);
    }
    return manifest.status();
  }
  ASSIGN_OR_RETURN(loaded.manifest, ParseManifestBytes(*manifest, path));
  return loaded;
}

StatusOr<CheckpointManifest> ReadManifestOnly(const std::string& path,
                                              const LoadCheckpointOptions& options) {
  ASSIGN_OR_RETURN(ArchiveBytes archive, ReadVerifiedArchive(path, options));
  internal::TarGzReader reader(archive.bytes, path, LimitsOf(options));
  while (true) {
    ASSIGN_OR_RETURN(std::string name, reader.Next());
    if (name.empty()) break;
    if (name != kManifestEntryName) continue;
    std::string bytes;
    RETURN_IF_ERROR(reader.ReadData([&](std::string_view chunk) {
      bytes.append(chunk);
      return Status::Ok();
    }));
    return ParseManifestBytes(bytes, path);
  }
  return DataLossError("checkpoint '" + path + "' has no " + kManifestEntryName);
}

bool LooksLikeCheckpoint(const std::string& path) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".qtc") == 0) return true;
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {0, 0};
  in.read(magic, 2);
  return in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
         static_cast<unsigned char>(magic[1]) == 0x8b;
}

}  // namespace qtune::tune
