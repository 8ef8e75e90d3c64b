#include "tune/checkpoint_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include "core/libarchive_util.h"
#include "tune/checkpoint.h"

namespace qtune::tune::internal {
namespace {

// Fixed entry timestamp (1980-01-01) so equal contents give equal archives.
constexpr time_t kEntryMtime = 315532800;
constexpr size_t kReadChunkBytes = size_t{1} << 16;

la_ssize_t AppendToString(struct archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

const char* FileTypeName(mode_t type) {
  switch (type) {
    case AE_IFLNK:
      return "a symbolic link";
    case AE_IFDIR:
      return "a folder";
    case AE_IFCHR:
      return "a character device";
    case AE_IFBLK:
      return "a block device";
    case AE_IFIFO:
      return "a FIFO";
    case AE_IFSOCK:
      return "a socket";
    default:
      return "not a plain file";
  }
}

}  // namespace

StatusOr<std::string> WriteTarGz(
    const std::vector<std::pair<std::string, std::string_view>>& entries) {
  libarchive::WriteArchive a(archive_write_new());
  if (!a) return InternalError("libarchive: out of memory");
  auto fail = [&](const std::string& what) {
    return InternalError("cannot write checkpoint archive: " + what + ": " +
                         libarchive::ErrorMessage(a.get()));
  };
  if (archive_write_add_filter_gzip(a.get()) != ARCHIVE_OK) return fail("gzip filter");
  // No timestamp in the gzip header: the same entries must give the same bytes.
  if (archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr) != ARCHIVE_OK) {
    return fail("gzip option !timestamp");
  }
  if (archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK) return fail("tar format");
  // No zero padding after the gzip stream: the file ends where the stream does, so a
  // truncated file is a truncated stream, which the reader detects.
  if (archive_write_set_bytes_in_last_block(a.get(), 1) != ARCHIVE_OK) return fail("block size");
  std::string out;
  if (archive_write_open(a.get(), &out, nullptr, AppendToString, nullptr) != ARCHIVE_OK) {
    return fail("open");
  }
  for (const auto& [name, data] : entries) {
    libarchive::Entry entry(archive_entry_new());
    archive_entry_set_pathname(entry.get(), name.c_str());
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_uid(entry.get(), 0);
    archive_entry_set_gid(entry.get(), 0);
    archive_entry_set_mtime(entry.get(), kEntryMtime, 0);
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(data.size()));
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK) {
      return fail("header of '" + name + "'");
    }
    size_t done = 0;
    while (done < data.size()) {
      la_ssize_t n = archive_write_data(a.get(), data.data() + done, data.size() - done);
      if (n <= 0) return fail("data of '" + name + "'");
      done += static_cast<size_t>(n);
    }
    if (archive_write_finish_entry(a.get()) != ARCHIVE_OK) return fail("end of '" + name + "'");
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) return fail("close");
  return out;
}

TarGzReader::TarGzReader(std::string_view bytes, std::string source, EntryLimits limits)
    : bytes_(bytes), source_(std::move(source)), limits_(limits), archive_(archive_read_new()) {}

TarGzReader::~TarGzReader() {
  if (archive_ != nullptr) archive_read_free(archive_);
}

Status TarGzReader::Error(const std::string& what) const {
  return DataLossError("checkpoint '" + source_ + "': " + what);
}

StatusOr<std::string> TarGzReader::Next() {
  if (archive_ == nullptr) return InternalError("libarchive: out of memory");
  if (!opened_) {
    archive_read_support_filter_gzip(archive_);
    archive_read_support_format_tar(archive_);
    if (archive_read_open_memory(archive_, bytes_.data(), bytes_.size()) != ARCHIVE_OK) {
      return Error("not a readable gzip-compressed tar archive (truncated or corrupt): " +
                   libarchive::ErrorMessage(archive_));
    }
    opened_ = true;
  }
  current_.clear();
  struct archive_entry* entry = nullptr;
  int r = archive_read_next_header(archive_, &entry);
  if (r == ARCHIVE_EOF) return std::string();
  if (r != ARCHIVE_OK) {
    return Error(
        fmt::format("cannot read the header after {} entries (truncated or corrupt "
                    "archive): {}",
                    entries_, libarchive::ErrorMessage(archive_)));
  }
  const char* raw = archive_entry_pathname(entry);
  if (raw == nullptr) return Error(fmt::format("entry {} has no readable name", entries_));
  std::string name = raw;
  std::string shown = "entry '" + name + "'";
  if (++entries_ > limits_.max_entries) {
    return Error(fmt::format("more than {} entries; refusing to unpack", limits_.max_entries));
  }
  if (!name.empty() && name[0] == '/') return Error(shown + " has an absolute path");
  if (name == ".." || name.starts_with("../") || name.find("/../") != std::string::npos ||
      name.ends_with("/..")) {
    return Error(shown + " has a '..' path that would escape the unpack folder");
  }
  if (archive_entry_hardlink(entry) != nullptr) return Error(shown + " is a hard link");
  mode_t type = archive_entry_filetype(entry);
  if (type != AE_IFREG) {
    return Error(
        fmt::format("{} is {}; a checkpoint holds plain files only", shown, FileTypeName(type)));
  }
  if (Status s = ValidateEntryName(name); !s.ok()) return Error(s.message());
  if (!seen_.insert(name).second) return Error(shown + " appears twice");
  if (archive_entry_size_is_set(entry)) {
    int64_t size = archive_entry_size(entry);
    if (size > limits_.max_entry_bytes) {
      return Error(fmt::format("{} declares {} bytes, more than the limit of {}", shown, size,
                               limits_.max_entry_bytes));
    }
    if (total_bytes_ + size > limits_.max_total_bytes) {
      return Error(fmt::format("{} brings the entries past the limit of {} bytes in all", shown,
                               limits_.max_total_bytes));
    }
  }
  current_ = name;
  return name;
}

Status TarGzReader::ReadData(const std::function<Status(std::string_view)>& sink) {
  if (current_.empty()) return InternalError("TarGzReader::ReadData without an entry");
  std::string chunk(kReadChunkBytes, '\0');
  int64_t entry_bytes = 0;
  while (true) {
    la_ssize_t n = archive_read_data(archive_, chunk.data(), chunk.size());
    if (n == 0) break;
    if (n < 0) {
      return Error("entry '" + current_ +
                   "' is truncated or corrupt: " + libarchive::ErrorMessage(archive_));
    }
    entry_bytes += n;
    total_bytes_ += n;
    if (entry_bytes > limits_.max_entry_bytes) {
      return Error(fmt::format("entry '{}' holds more than the limit of {} bytes", current_,
                               limits_.max_entry_bytes));
    }
    if (total_bytes_ > limits_.max_total_bytes) {
      return Error(fmt::format("entries hold more than the limit of {} bytes in all",
                               limits_.max_total_bytes));
    }
    RETURN_IF_ERROR(sink(std::string_view(chunk.data(), static_cast<size_t>(n))));
  }
  return Status::Ok();
}

}  // namespace qtune::tune::internal
