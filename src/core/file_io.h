// Whole-file helpers and a temporary folder. Errors name the path and the OS reason.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/status.h"

namespace qtune {

// Reads a whole file. Fails with NotFound if it does not exist, ResourceExhausted if it is
// larger than `max_bytes`.
StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes = int64_t{4} << 30);
// Writes `contents` to `path` atomically: a temporary file in the same folder, fsync,
// then rename; a crash leaves either the old file or the new one, never a torn one.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

// A new folder under the system's temporary directory, removed with everything in it when
// its owner goes out of scope (moving hands it over).
class TempFolder {
 public:
  // `prefix` starts the folder's name: "qtune-tune-" makes e.g. /tmp/qtune-tune-Ab12Cd.
  static StatusOr<TempFolder> Create(const std::string& prefix);
  TempFolder(TempFolder&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder();
  const std::string& path() const { return path_; }

 private:
  explicit TempFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace qtune
