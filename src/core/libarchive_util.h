// RAII owners and the error text of libarchive handles, shared by the .npz reader/writer
// (npz.h) and the checkpoint archive (tune/checkpoint_archive.h). Include only from .cc
// files that link LibArchive.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <string>

namespace qtune::libarchive {

struct ReadArchiveDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
struct WriteArchiveDeleter {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(struct archive_entry* e) const { archive_entry_free(e); }
};

using ReadArchive = std::unique_ptr<struct archive, ReadArchiveDeleter>;
using WriteArchive = std::unique_ptr<struct archive, WriteArchiveDeleter>;
using Entry = std::unique_ptr<struct archive_entry, EntryDeleter>;

// The handle's last error, or a placeholder when libarchive gives none.
inline std::string ErrorMessage(struct archive* a) {
  const char* message = archive_error_string(a);
  return message != nullptr ? message : "unknown libarchive error";
}

}  // namespace qtune::libarchive
