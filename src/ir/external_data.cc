#include "ir/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

namespace qtune::ir {
namespace fs = std::filesystem;

namespace {

// Closes a file descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

bool IsInside(const fs::path& dir, const fs::path& path) {
  auto [dir_end, path_it] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return dir_end == dir.end() && path_it != path.end();
}

}  // namespace

StatusOr<std::string> ResolveExternalDataPath(const std::string& dir, const std::string& location) {
  const std::string quoted = "external data location '" + location + "'";
  if (location.empty()) return InvalidArgumentError("external data location is empty");
  if (location.find('\0') != std::string::npos) {
    return InvalidArgumentError(quoted + " contains a NUL character");
  }
  fs::path relative(location);
  if (relative.is_absolute() || location.front() == '/') {
    return InvalidArgumentError(quoted +
                                " is an absolute path; external data must be a path relative "
                                "to the model's folder");
  }
  for (const fs::path& part : relative) {
    if (part == "..") {
      return InvalidArgumentError(quoted +
                                  " contains '..'; external data must stay inside the model's "
                                  "folder");
    }
  }
  std::error_code ec;
  fs::path base = fs::canonical(dir.empty() ? fs::path(".") : fs::path(dir), ec);
  if (ec) return NotFoundError("model folder '" + dir + "' cannot be opened: " + ec.message());
  fs::path full = fs::canonical(base / relative, ec);
  if (ec) {
    return NotFoundError(quoted + ": file '" + (base / relative).string() +
                         "' cannot be opened: " + ec.message());
  }
  if (!IsInside(base, full)) {
    return InvalidArgumentError(quoted + " resolves to '" + full.string() +
                                "', outside the model's folder '" + base.string() +
                                "' (through a symlink); refusing to read it");
  }
  if (!fs::is_regular_file(full, ec)) {
    return InvalidArgumentError(quoted + " resolves to '" + full.string() +
                                "', which is not a regular file");
  }
  return full.string();
}

StatusOr<int64_t> ExternalFileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return NotFoundError("cannot stat '" + path + "': " + std::strerror(errno));
  }
  return static_cast<int64_t>(st.st_size);
}

Status ReadFileRange(const std::string& path, int64_t offset, std::span<std::byte> out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFoundError("cannot open '" + path + "': " + std::strerror(errno));
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return InternalError("cannot stat '" + path + "': " + std::strerror(errno));
  }
  const int64_t file_size = st.st_size;
  const int64_t length = static_cast<int64_t>(out.size());
  if (offset < 0 || offset > file_size || length > file_size - offset) {
    return OutOfRangeError("bytes [" + std::to_string(offset) + ", " + std::to_string(offset) +
                           "+" + std::to_string(length) + ") lie beyond the end of '" + path +
                           "' (" + std::to_string(file_size) + " bytes)");
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done,
                        static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return DataLossError("short read from '" + path + "' at offset " +
                           std::to_string(offset + static_cast<int64_t>(done)));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

StatusOr<int64_t> ParseExternalDataNumber(const std::string& key, const std::string& text) {
  if (text.empty() || text.size() > 19) {
    return InvalidArgumentError("external data '" + key + "' is '" + text +
                                "', not a non-negative integer");
  }
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return InvalidArgumentError("external data '" + key + "' is '" + text +
                                  "', not a non-negative integer");
    }
    int digit = c - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
      return InvalidArgumentError("external data '" + key + "' value '" + text + "' is too large");
    }
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace qtune::ir
