// Internal to tune/checkpoint.cc: the gzip-compressed tar archive of a checkpoint, written
// reproducibly and read with every entry header checked before its data is touched.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

struct archive;

namespace qtune::tune::internal {

// A tar (pax, restricted to plain ustar headers where possible) + gzip archive of `entries`
// in the given order: regular files, mode 0644, owner 0:0, mtime 1980-01-01, and a gzip
// header without a timestamp, so equal entries give equal bytes.
// REQUIRES: entry names already validated.
StatusOr<std::string> WriteTarGz(
    const std::vector<std::pair<std::string, std::string_view>>& entries);

struct EntryLimits {
  int64_t max_entry_bytes = 0;
  int64_t max_entries = 0;
  int64_t max_total_bytes = 0;
};

// Reads the entries of an in-memory archive in order. Next() checks each header: plain file
// only (no links, devices, folders), no absolute or `..` path, a name ValidateEntryName
// accepts, no repeated name, and the count and declared sizes within the limits; ReadData()
// enforces the sizes again on the bytes actually read. Every failure is DataLoss naming
// `source` and the entry. The caller keeps `bytes` alive and unchanged while reading.
class TarGzReader {
 public:
  TarGzReader(std::string_view bytes, std::string source, EntryLimits limits);
  ~TarGzReader();
  TarGzReader(const TarGzReader&) = delete;
  TarGzReader& operator=(const TarGzReader&) = delete;

  // The next entry's name, or "" at the end of the archive.
  StatusOr<std::string> Next();
  // Streams the current entry's data to `sink` in chunks. REQUIRES: Next() returned a name.
  Status ReadData(const std::function<Status(std::string_view)>& sink);

 private:
  Status Error(const std::string& what) const;

  std::string_view bytes_;
  std::string source_;
  EntryLimits limits_;
  struct archive* archive_ = nullptr;
  bool opened_ = false;
  std::string current_;
  int64_t entries_ = 0;
  int64_t total_bytes_ = 0;
  std::set<std::string> seen_;
};

}  // namespace qtune::tune::internal
