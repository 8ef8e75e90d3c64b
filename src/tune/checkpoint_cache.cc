#include "tune/checkpoint_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/file_io.h"
#include "core/json_limits.h"
#include "core/private_dir.h"
#include "core/sha256.h"
#include "tune/checkpoint.h"

namespace qtune::tune::internal {
namespace {

namespace fs = std::filesystem;

std::string OsReason() { return std::strerror(errno); }

// Removes a temporary folder on scope exit unless Keep() was called.
class TempFolder {
 public:
  explicit TempFolder(std::string path) : path_(std::move(path)) {}
  ~TempFolder() {
    if (keep_ || path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

// Owns a file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // Closes now, reporting failure (a delayed write error surfaces here).
  bool Close() {
    int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return InternalError("cannot write '" + path + "': " + OsReason());
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

StatusOr<std::string> MakeTempFolder(const std::string& cache_dir, const std::string& tag) {
  std::string pattern = cache_dir + "/." + tag + ".XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return InternalError("cannot create a temporary folder in checkpoint cache '" + cache_dir +
                         "': " + OsReason());
  }
  return std::string(buf.data());
}

std::string MarkerJson(const std::string& archive_sha256,
                       const std::map<std::string, std::string>& digests,
                       const std::map<std::string, int64_t>& sizes) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [name, sha] : digests) {
    files.push_back({{"name", name}, {"sha256", sha}, {"bytes", sizes.at(name)}});
  }
  nlohmann::json marker = {{"archive_sha256", archive_sha256}, {"files", std::move(files)}};
  return DumpJson(marker, 2) + "\n";
}

}  // namespace

StatusOr<std::map<std::string, std::string>> ArchiveEntryDigests(TarGzReader& reader) {
  std::map<std::string, std::string> digests;
  while (true) {
    ASSIGN_OR_RETURN(std::string name, reader.Next());
    if (name.empty()) break;
    Sha256 sha;
    RETURN_IF_ERROR(reader.ReadData([&](std::string_view chunk) {
      sha.Update(chunk);
      return Status::Ok();
    }));
    digests[name] = sha.HexDigest();
  }
  return digests;
}

StatusOr<std::map<std::string, std::string>> VerifyUnpacked(
    const std::string& dir, const std::string& archive_sha256,
    const std::map<std::string, std::string>& expected) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFoundError("'" + dir + "' does not exist");
    return DataLossError("cannot inspect '" + dir + "': " + OsReason());
  }
  if (!S_ISDIR(st.st_mode)) return DataLossError("'" + dir + "' is not a folder");
  if (Status mine = CheckPrivateDir(dir, {"unpacked checkpoint folder"}); !mine.ok()) {
    return DataLossError(mine.message());
  }
  const std::string marker_path = dir + "/" + kUnpackedMarkerName;
  StatusOr<std::string> text = qtune::ReadFile(marker_path, int64_t{1} << 20);
  if (!text.ok()) return DataLossError("no readable completion marker '" + marker_path + "'");
  auto bad = [&](const std::string& what) {
    return DataLossError("completion marker '" + marker_path + "': " + what);
  };
  ASSIGN_OR_RETURN(const nlohmann::json marker,
                   ParseUntrustedJson(*text, "completion marker '" + marker_path + "'"));
  if (!marker.is_object() || !marker.contains("files") || !marker["files"].is_array() ||
      !marker.contains("archive_sha256") || marker["archive_sha256"] != archive_sha256) {
    return bad("malformed, or for another archive");
  }
  std::map<std::string, std::string> digests;
  std::map<std::string, int64_t> sizes;
  for (const nlohmann::json& f : marker["files"]) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("sha256") ||
        !f["sha256"].is_string() || !f.contains("bytes") || !f["bytes"].is_number_integer()) {
      return bad("malformed file record");
    }
    std::string name = f["name"].get<std::string>();
    if (!ValidateEntryName(name).ok()) return bad("bad file name '" + name + "'");
    digests[name] = f["sha256"].get<std::string>();
    sizes[name] = f["bytes"].get<int64_t>();
  }
  // The marker is in the cache, so it proves nothing by itself: what it lists must be the
  // archive's own entries.
  if (digests != expected) {
    return bad("its files are not the entries of the archive (planted, or damaged)");
  }
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name != kUnpackedMarkerName && digests.count(name) == 0) {
      return DataLossError("unexpected file '" + name + "' in '" + dir + "'");
    }
  }
  if (ec) return DataLossError("cannot list '" + dir + "': " + ec.message());
  for (const auto& [name, sha] : digests) {
    const std::string file = dir + "/" + name;
    if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return DataLossError("'" + file + "' is missing or not a plain file");
    }
    if (st.st_size != sizes[name]) return DataLossError("'" + file + "' has the wrong size");
    StatusOr<std::string> actual = Sha256File(file);
    if (!actual.ok() || *actual != sha) return DataLossError("'" + file + "' changed");
  }
  return digests;
}

StatusOr<std::map<std::string, std::string>> UnpackToCache(
    TarGzReader& reader, const std::string& source, const std::string& cache_dir,
    const std::string& archive_sha256,
    const std::function<Status(const std::string& manifest_bytes)>& check_manifest) {
  std::error_code ec;
  ASSIGN_OR_RETURN(std::string tmp_path,
                   MakeTempFolder(cache_dir, archive_sha256.substr(0, 16) + ".unpacking"));
  TempFolder tmp(tmp_path);

  std::map<std::string, std::string> digests;
  std::map<std::string, int64_t> sizes;
  std::string manifest;
  bool has_manifest = false;
  while (true) {
    ASSIGN_OR_RETURN(std::string name, reader.Next());
    if (name.empty()) break;
    const std::string file = tmp.path() + "/" + name;
    Fd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd.get() < 0) return InternalError("cannot create '" + file + "': " + OsReason());
    Sha256 sha;
    int64_t bytes = 0;
    const bool is_manifest = name == kManifestEntryName;
    RETURN_IF_ERROR(reader.ReadData([&](std::string_view chunk) {
      sha.Update(chunk);
      bytes += static_cast<int64_t>(chunk.size());
      if (is_manifest) manifest.append(chunk);
      return WriteAll(fd.get(), chunk, file);
    }));
    if (::fsync(fd.get()) != 0 || !fd.Close()) {
      return InternalError("cannot flush '" + file + "': " + OsReason());
    }
    has_manifest = has_manifest || is_manifest;
    digests[name] = sha.HexDigest();
    sizes[name] = bytes;
  }
  if (!has_manifest) {
    return DataLossError("checkpoint '" + source + "' has no " + kManifestEntryName);
  }
  RETURN_IF_ERROR(check_manifest(manifest));
  RETURN_IF_ERROR(WriteFileAtomic(tmp.path() + "/" + kUnpackedMarkerName,
                                  MarkerJson(archive_sha256, digests, sizes)));
  Fd dir_fd(::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) ::fsync(dir_fd.get());

  const std::string final_path = cache_dir + "/" + archive_sha256;
  struct stat st;
  if (::lstat(final_path.c_str(), &st) == 0) {
    // A damaged copy: move it aside first (readers see the old folder or the new one, never
    // a mix), then delete it.
    static std::atomic<int> counter{0};
    std::string stale = cache_dir + "/." + archive_sha256.substr(0, 16) +
                        fmt::format(".stale.{}.{}", ::getpid(), counter++);
    if (::rename(final_path.c_str(), stale.c_str()) == 0) {
      fs::remove_all(stale, ec);
    } else {
      fs::remove_all(final_path, ec);
    }
  }
  if (::rename(tmp.path().c_str(), final_path.c_str()) != 0) {
    int err = errno;
    // Another process may have committed the same archive meanwhile: use its copy.
    if (err == EEXIST || err == ENOTEMPTY) {
      auto theirs = VerifyUnpacked(final_path, archive_sha256, digests);
      if (theirs.ok()) return theirs;
    }
    return InternalError("cannot rename unpacked checkpoint into '" + final_path +
                         "': " + std::strerror(err));
  }
  tmp.Keep();
  return digests;
}

}  // namespace qtune::tune::internal
