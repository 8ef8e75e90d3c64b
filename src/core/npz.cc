#include "core/npz.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include "core/libarchive_util.h"
#include "core/logging.h"
#include "core/npy.h"

namespace qtune {
namespace {

constexpr int64_t kMaxMemberBytes = kMaxTensorBytes + kMaxNpyHeaderBytes + 64;
constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr size_t kWriteChunkBytes = size_t{64} << 20;
constexpr std::string_view kNpySuffix = ".npy";
// Fixed member timestamp (1980-01-01, the zip epoch) so equal inputs give equal archives.
constexpr time_t kMemberMtime = 315532800;

// Reads the current member's data, refusing to grow past kMaxMemberBytes.
StatusOr<std::string> ReadMember(struct archive* a, struct archive_entry* entry,
                                 const std::string& source) {
  if (archive_entry_size_is_set(entry) && archive_entry_size(entry) > kMaxMemberBytes) {
    return ResourceExhaustedError(
        "'" + source + "': member declares " + std::to_string(archive_entry_size(entry)) +
        " uncompressed bytes, more than the " + std::to_string(kMaxTensorBytes >> 30) +
        " GiB tensor limit; split the data into smaller arrays");
  }
  std::string data;
  // The declared size is a hint only (it is not verified until the data is read).
  if (archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0) {
    data.reserve(
        static_cast<size_t>(std::min<int64_t>(archive_entry_size(entry), int64_t{64} << 20)));
  }
  std::vector<char> chunk(kChunkBytes);
  while (true) {
    la_ssize_t n = archive_read_data(a, chunk.data(), chunk.size());
    if (n < 0) {
      return DataLossError("'" + source + "': cannot decompress member: " +
                           libarchive::ErrorMessage(a) + "; the archive is corrupt");
    }
    if (n == 0) break;
    if (static_cast<int64_t>(data.size()) + n > kMaxMemberBytes) {
      return ResourceExhaustedError("'" + source + "': member is larger than the " +
                                    std::to_string(kMaxTensorBytes >> 30) +
                                    " GiB tensor limit; split the data into smaller arrays");
    }
    data.append(chunk.data(), static_cast<size_t>(n));
  }
  return data;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Removes the temporary file unless Commit() was called.
class TempFileGuard {
 public:
  explicit TempFileGuard(std::string path) : path_(std::move(path)) {}
  ~TempFileGuard() {
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  void Commit() { committed_ = true; }

 private:
  std::string path_;
  bool committed_ = false;
};

// Closes a file descriptor unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

Status WriteAll(struct archive* a, const void* data, size_t size, const std::string& source) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    la_ssize_t n = archive_write_data(a, p, std::min(size, kWriteChunkBytes));
    if (n <= 0) {
      return DataLossError("'" + source +
                           "': cannot write member data: " + libarchive::ErrorMessage(a));
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<NpzEntries> ReadNpz(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    std::string message = "cannot open '" + path + "': " + std::strerror(err);
    return err == ENOENT ? NotFoundError(message) : InvalidArgumentError(message);
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError("'" + path + "' is not a regular file");

  libarchive::ReadArchive a(archive_read_new());
  if (!a) return InternalError("libarchive: out of memory opening '" + path + "'");
  archive_read_support_format_zip(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) {
    return InvalidArgumentError("cannot open '" + path +
                                "' as a .npz (zip) archive: " + libarchive::ErrorMessage(a.get()));
  }

  NpzEntries entries;
  std::set<std::string> keys;
  while (true) {
    struct archive_entry* entry = nullptr;
    int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      std::string where = entries.empty() ? "" : " after member '" + entries.back().first + ".npy'";
      return InvalidArgumentError("'" + path + "' is not a readable .npz (zip) archive" + where +
                                  ": " + libarchive::ErrorMessage(a.get()));
    }
    const char* raw_name = archive_entry_pathname(entry);
    const std::string name = raw_name != nullptr ? raw_name : "";
    const std::string source = path + ":" + name;
    if (archive_entry_filetype(entry) == AE_IFDIR) continue;
    if (archive_entry_is_encrypted(entry)) {
      return UnimplementedError("'" + source +
                                "': member is encrypted; save the archive without a password");
    }
    if (!EndsWith(name, kNpySuffix)) {
      QTUNE_LOG_WARNING("'{}': skipping member '{}', which is not a .npy file", path, name);
      continue;
    }
    std::string key = name.substr(0, name.size() - kNpySuffix.size());
    if (!keys.insert(key).second) {
      return InvalidArgumentError("'" + path + "' has two members named '" + name +
                                  "'; the archive is corrupt");
    }
    ASSIGN_OR_RETURN(std::string bytes, ReadMember(a.get(), entry, source));
    ASSIGN_OR_RETURN(Tensor tensor, ParseNpy(bytes, source));
    entries.emplace_back(std::move(key), std::move(tensor));
  }
  return entries;
}

Status WriteNpz(const std::string& path, const NpzEntries& entries,
                const NpzWriteOptions& options) {
  // Validate everything before touching the file system.
  std::set<std::string> keys;
  std::vector<std::string> headers;
  for (const auto& [key, tensor] : entries) {
    if (key.empty() || key.find('\0') != std::string::npos) {
      return InvalidArgumentError("cannot write '" + path + "': array keys must be non-empty");
    }
    if (!keys.insert(key).second) {
      return InvalidArgumentError("cannot write '" + path + "': the key '" + key +
                                  "' appears twice; keys must be unique");
    }
    auto header = SerializeNpyHeader(tensor);
    if (!header.ok()) {
      return header.status().WithContext("cannot write '" + path + "', array '" + key + "'");
    }
    headers.push_back(std::move(header).value());
  }

  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return InvalidArgumentError("cannot create '" + tmp + "': " + std::strerror(errno));
  }
  FdCloser fd_closer(fd);
  TempFileGuard tmp_guard(tmp);

  libarchive::WriteArchive a(archive_write_new());
  if (!a) return InternalError("libarchive: out of memory writing '" + path + "'");
  if (archive_write_set_format_zip(a.get()) != ARCHIVE_OK ||
      (options.compress ? archive_write_zip_set_compression_deflate(a.get())
                        : archive_write_zip_set_compression_store(a.get())) != ARCHIVE_OK ||
      archive_write_open_fd(a.get(), fd) != ARCHIVE_OK) {
    return InternalError("cannot start zip archive '" + tmp +
                         "': " + libarchive::ErrorMessage(a.get()));
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [key, tensor] = entries[i];
    const std::string member = key + std::string(kNpySuffix);
    const std::string source = path + ":" + member;
    libarchive::Entry entry(archive_entry_new());
    archive_entry_set_pathname(entry.get(), member.c_str());
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_mtime(entry.get(), kMemberMtime, 0);
    archive_entry_set_size(entry.get(),
                           static_cast<la_int64_t>(headers[i].size() + tensor.byte_size()));
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK) {
      return DataLossError("'" + source +
                           "': cannot write member header: " + libarchive::ErrorMessage(a.get()));
    }
    RETURN_IF_ERROR(WriteAll(a.get(), headers[i].data(), headers[i].size(), source));
    RETURN_IF_ERROR(WriteAll(a.get(), tensor.raw_data(), tensor.byte_size(), source));
    if (archive_write_finish_entry(a.get()) != ARCHIVE_OK) {
      return DataLossError("'" + source +
                           "': cannot finish member: " + libarchive::ErrorMessage(a.get()));
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return DataLossError("cannot finish zip archive '" + tmp +
                         "': " + libarchive::ErrorMessage(a.get()));
  }
  a.reset();
  if (::fsync(fd) != 0) {
    return DataLossError("cannot flush '" + tmp + "': " + std::strerror(errno));
  }
  if (::close(fd_closer.Release()) != 0) {
    return DataLossError("cannot close '" + tmp + "': " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return InvalidArgumentError("cannot rename '" + tmp + "' to '" + path +
                                "': " + std::strerror(errno));
  }
  tmp_guard.Commit();
  return Status::Ok();
}

}  // namespace qtune
