#include "measure/state_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>

#include "core/json_limits.h"
#include "core/logging.h"
#include "core/warning_summary.h"

namespace qtune::measure {
namespace {

using Json = nlohmann::json;

constexpr char kForceNewAdvice[] = "--force-new starts over (the old log is kept beside it)";

// Owns a file descriptor until Release().
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

Status OsError(const std::string& what, const std::string& path, int err) {
  std::string message = fmt::format("{} '{}': {}", what, path, std::strerror(err));
  if (err == ENOENT) return NotFoundError(message);
  if (err == ENOSPC || err == EDQUOT) return ResourceExhaustedError(message);
  return InternalError(message);
}

// "threads: log 4, this run 8; seed: ..." for the options that differ. Objects on both
// sides are compared key by key: "calib_sha256 'calib.npy': log \"9f..\", this run \"c2..\"".
void DiffInto(const Json& logged, const Json& now, const std::string& prefix, std::string* diff) {
  auto describe = [](const Json& object, const std::string& key) {
    auto it = object.find(key);
    return it == object.end() ? std::string("(absent)") : DumpJson(*it);
  };
  Json keys = Json::object();
  for (const auto& [key, value] : logged.items()) keys[key] = true;
  for (const auto& [key, value] : now.items()) keys[key] = true;
  for (const auto& [key, unused] : keys.items()) {
    if (logged.contains(key) && now.contains(key) && logged[key] == now[key]) continue;
    const std::string name = prefix.empty() ? key : prefix + " '" + key + "'";
    if (logged.contains(key) && now.contains(key) && logged[key].is_object() &&
        now[key].is_object()) {
      DiffInto(logged[key], now[key], name, diff);
      continue;
    }
    if (!diff->empty()) *diff += "; ";
    *diff +=
        fmt::format("{}: log {}, this run {}", name, describe(logged, key), describe(now, key));
  }
}

std::string OptionsDiff(const Json& logged, const Json& now) {
  if (!logged.is_object() || !now.is_object()) {
    return fmt::format("log {}, this run {}", DumpJson(logged), DumpJson(now));
  }
  std::string diff;
  DiffInto(logged, now, "", &diff);
  return diff.empty() ? "(same values, different fingerprint)" : diff;
}

std::string NowIso8601() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::tm utc{};
  ::gmtime_r(&now.tv_sec, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03d}Z", buffer, static_cast<int>(now.tv_nsec / 1000000));
}

Status SyncParentFolder(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return OsError("cannot open the folder of", path, errno);
  FileDescriptor closer(fd);
  // Some file systems cannot fsync a folder (EINVAL); the entry is then as safe as it gets.
  if (::fsync(fd) != 0 && errno != EINVAL) return OsError("cannot sync the folder of", path, errno);
  return Status::Ok();
}

Status LockExclusive(int fd, const std::string& path) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return Status::Ok();
  if (errno == EWOULDBLOCK) {
    return FailedPreconditionError(fmt::format(
        "state log '{}' is in use by another qtune process; wait for it to finish or use "
        "another work folder",
        path));
  }
  return Status::Ok();  // no locking on this file system (ENOLCK): carry on unlocked
}

StatusOr<std::string> ReadAll(int fd, const std::string& path) {
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OsError("cannot read state log", path, errno);
    if (n == 0) return contents;
    contents.append(buffer, static_cast<size_t>(n));
  }
}

// Renames `path` to the first free "<path>.old-<N>", N = 1, 2, ...
StatusOr<std::string> MoveAside(const std::string& path) {
  for (int n = 1;; ++n) {
    std::string aside = fmt::format("{}.old-{}", path, n);
    struct stat st;
    if (::lstat(aside.c_str(), &st) == 0) continue;
    if (errno != ENOENT) return OsError("cannot inspect", aside, errno);
    if (::rename(path.c_str(), aside.c_str()) != 0) {
      return OsError("cannot move the old state log aside to " + aside + ":", path, errno);
    }
    return aside;
  }
}

}  // namespace

StatusOr<std::unique_ptr<StateLog>> StateLog::Open(const std::string& path,
                                                   const measure::StateHeader& header,
                                                   const OpenOptions& options,
                                                   std::vector<std::string>* warnings) {
  auto warn = [&](std::string message) {
    if (warnings == nullptr) {
      QTUNE_LOG_WARNING("{}", message);
    } else {
      warnings->push_back(std::move(message));
    }
  };
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return OsError("cannot create state log", path, errno);
    RETURN_IF_ERROR(SyncParentFolder(path));
  }
  if (fd < 0) return OsError("cannot open state log", path, errno);
  FileDescriptor owner(fd);
  RETURN_IF_ERROR(LockExclusive(fd, path));
  ASSIGN_OR_RETURN(std::string contents, ReadAll(fd, path));

  if (options.force_new && !contents.empty()) {
    ASSIGN_OR_RETURN(std::string aside, MoveAside(path));
    QTUNE_LOG_INFO("--force-new: the old state log is now {}", aside);
    int fresh = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fresh < 0) return OsError("cannot create state log", path, errno);
    owner.Reset(fresh);
    RETURN_IF_ERROR(SyncParentFolder(path));
    RETURN_IF_ERROR(LockExclusive(fresh, path));
    contents.clear();
  }

  std::unique_ptr<StateLog> log(new StateLog(path, header.Id(), owner.get()));
  owner.Release();  // `log` owns it now
  auto start_afresh = [&]() -> Status {
    if (::ftruncate(log->fd_, 0) != 0) return OsError("cannot truncate state log", path, errno);
    log->size_ = 0;
    return log->WriteLine(measure::EncodeLine(measure::HeaderToJson(header)));
  };
  if (contents.empty()) {
    RETURN_IF_ERROR(start_afresh());
    return log;
  }

  // The header: only the torn remains of one is started afresh; anything else unreadable
  // is some other file, which Open() must not touch.
  const std::vector<measure::LogLine> lines = measure::SplitLogLines(contents);
  if (lines.size() == 1 && !lines[0].complete && measure::IsTornHeader(lines[0].text)) {
    warn(fmt::format("{}:1: torn header ({} bytes) dropped; starting a new log", path,
                     lines[0].text.size()));
    RETURN_IF_ERROR(start_afresh());
    return log;
  }
  ASSIGN_OR_RETURN(measure::ParsedStateLog parsed,
                   measure::ParseStateLog(contents, path, kForceNewAdvice));
  if (parsed.header.model_sha256 != header.model_sha256) {
    return FailedPreconditionError(fmt::format(
        "state log '{}' was recorded for another model (sha256 {}, this run's model is {}); "
        "move it away or {}",
        path, parsed.header.model_sha256, header.model_sha256, kForceNewAdvice));
  }
  if (parsed.stored_fingerprint != header.OptionsFingerprint()) {
    return FailedPreconditionError(fmt::format(
        "state log '{}' was recorded with other options or data ({}); rerun with the same "
        "options and data or {}",
        path, OptionsDiff(parsed.header.options, header.options), kForceNewAdvice));
  }

  // The measurements; a torn tail is cut off so appends continue after the last good line.
  log->size_ = static_cast<int64_t>(parsed.good_size);
  if (parsed.torn_tail) {
    parsed.warnings.back() += fmt::format("; file truncated to {} bytes", parsed.good_size);
    if (::ftruncate(log->fd_, static_cast<off_t>(parsed.good_size)) != 0 ||
        ::fsync(log->fd_) != 0) {
      return OsError("cannot truncate the torn tail of state log", path, errno);
    }
  }
  for (std::string& warning : parsed.warnings) warn(std::move(warning));
  for (auto& [line, record] : parsed.records) log->replayed_.push_back(std::move(record));
  return log;
}

StatusOr<std::unique_ptr<StateLog>> StateLog::OpenInWorkDir(const std::string& work_dir,
                                                            const measure::StateHeader& header,
                                                            bool force_new) {
  const std::string path = (std::filesystem::path(work_dir) / "state.jsonl").string();
  std::vector<std::string> warnings;
  auto log = Open(path, header, OpenOptions{force_new}, &warnings);
  if (!log.ok() && log.status().code() == StatusCode::kFailedPrecondition) {
    return InvalidArgumentError(log.status().message());  // a state file that is not ours
  }
  if (!log.ok()) return log.status();
  for (const std::string& w : SummarizeLineWarnings(warnings)) QTUNE_LOG_WARNING("{}", w);
  return log;
}

StateLog::~StateLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status StateLog::Append(measure::MeasurementRecord record) {
  RETURN_IF_ERROR(broken_);
  if (record.key.empty()) {
    return InvalidArgumentError(fmt::format("state log '{}': a record needs a key", path_));
  }
  for (const auto* values : {&record.candidate_ms, &record.reference_ms}) {
    for (double value : *values) {
      if (!std::isfinite(value)) {
        return InvalidArgumentError(fmt::format(
            "state log '{}': record '{}' has a non-finite latency; record a failed measurement "
            "with ok = false and an error_kind instead",
            path_, record.key));
      }
    }
  }
  if (record.timestamp.empty()) record.timestamp = NowIso8601();
  record.header_id = header_id_;
  return WriteLine(measure::EncodeLine(measure::RecordToJson(record)));
}

Status StateLog::WriteLine(const std::string& line) {
  RETURN_IF_ERROR(broken_);
  ssize_t written;
  do {
    written = ::write(fd_, line.data(), line.size());
  } while (written < 0 && errno == EINTR);
  if (written != static_cast<ssize_t>(line.size())) {
    int err = written < 0 ? errno : ENOSPC;  // a short write means the disk filled up
    Status status = OsError("cannot append to state log", path_, err);
    if (written > 0 && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      broken_ = status;  // half a line may stay; reopening drops it as a torn tail
    }
    return status;
  }
  if (::fsync(fd_) != 0) {
    broken_ = OsError("cannot sync state log", path_, errno);
    return broken_;
  }
  size_ += static_cast<int64_t>(line.size());
  return Status::Ok();
}

}  // namespace qtune::measure
