#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace qtune {
namespace {

Status OsError(const std::string& what, const std::string& path) {
  int err = errno;
  std::string msg = what + " '" + path + "': " + std::strerror(err);
  if (err == ENOENT) return NotFoundError(msg);
  return InvalidArgumentError(msg);
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return OsError("cannot open", path);
  if (S_ISDIR(st.st_mode)) return InvalidArgumentError("'" + path + "' is a folder, not a file");
  if (st.st_size > max_bytes) {
    return ResourceExhaustedError("'" + path + "' is " + std::to_string(st.st_size) +
                                  " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return OsError("cannot open", path);
  std::string contents(static_cast<size_t>(st.st_size), '\0');
  in.read(contents.data(), st.st_size);
  if (in.gcount() != st.st_size) return DataLossError("short read from '" + path + "'");
  return contents;
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return OsError("cannot create", tmp);
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = OsError("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Status s = OsError("cannot flush", tmp);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = OsError("cannot rename into place", path);
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

StatusOr<TempFolder> TempFolder::Create(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return InternalError("cannot create a temporary folder '" + pattern +
                         "': " + std::strerror(errno));
  }
  return TempFolder(pattern);
}

TempFolder::~TempFolder() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

}  // namespace qtune
