#include "autotune/state_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <string_view>
#include <utility>

#include "core/json_limits.h"
#include "core/logging.h"
#include "core/sha256.h"

namespace qtune::autotune {
namespace {

using Json = nlohmann::json;

constexpr size_t kChecksumDigits = 16;
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

// Compact JSON; invalid UTF-8 (an error_detail copied from a child's stderr) becomes U+FFFD
// instead of throwing.
std::string Dump(const Json& json) { return DumpJson(json); }

std::string Checksum(std::string_view text) { return Sha256Hex(text).substr(0, kChecksumDigits); }

std::string MakeLine(const Json& json) {
  std::string text = Dump(json);
  return Checksum(text) + " " + text + "\n";
}

// Checks the checksum of one line (without its newline) and parses its JSON object.
// The error says what is wrong, for a warning.
StatusOr<Json> ParseLine(std::string_view line) {
  if (line.size() < kChecksumDigits + 2 || line[kChecksumDigits] != ' ') {
    return DataLossError("not a \"<checksum> <json>\" line");
  }
  std::string_view text = line.substr(kChecksumDigits + 1);
  if (Checksum(text) != line.substr(0, kChecksumDigits)) return DataLossError("bad checksum");
  StatusOr<Json> json = ParseUntrustedJson(text, "record");  // depth-limited
  if (!json.ok() || !json->is_object()) return DataLossError("bad JSON");
  return json;
}

Status FieldError(const char* field, const char* type) {
  return InvalidArgumentError(fmt::format("field \"{}\" is missing or not {}", field, type));
}

Status GetString(const Json& json, const char* field, std::string* out) {
  auto it = json.find(field);
  if (it == json.end() || !it->is_string()) return FieldError(field, "a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

Status GetLatencies(const Json& json, const char* field, std::vector<double>* out) {
  auto it = json.find(field);
  if (it == json.end() || !it->is_array()) return FieldError(field, "an array");
  out->clear();
  for (const Json& value : *it) {
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
      return FieldError(field, "an array of finite numbers");
    }
    out->push_back(value.get<double>());
  }
  return Status::Ok();
}

Json LatenciesToJson(const std::vector<double>& values) {
  Json array = Json::array();
  for (double value : values) array.push_back(std::isfinite(value) ? Json(value) : Json(nullptr));
  return array;
}

Json HeaderToJson(const StateHeader& header) {
  return Json{{"type", "header"},
              {"format_version", header.format_version},
              {"qtune_version", header.qtune_version},
              {"model_sha256", header.model_sha256},
              {"options", header.options},
              {"options_fingerprint", header.OptionsFingerprint()},
              {"header_id", header.Id()}};
}

// The header as read back; `fingerprint` is the stored options_fingerprint.
struct StoredHeader {
  StateHeader header;
  std::string fingerprint;
};

StatusOr<StoredHeader> HeaderFromJson(const Json& json) {
  StoredHeader stored;
  std::string type;
  RETURN_IF_ERROR(GetString(json, "type", &type));
  if (type != "header") return InvalidArgumentError("the first record is not a header");
  auto version = json.find("format_version");
  if (version == json.end() || !version->is_number_integer() || version->get<int64_t>() < 1) {
    return FieldError("format_version", "a positive integer");
  }
  if (version->get<int64_t>() < kStateLogFormatVersion) {
    return FailedPreconditionError(fmt::format(
        "it has format version {}, from an older qtune whose records do not name the header "
        "they belong to (a record copied from another run would be replayed); finish it with "
        "the qtune that wrote it",
        version->get<int64_t>()));
  }
  if (version->get<int64_t>() > kStateLogFormatVersion) {
    return FailedPreconditionError(fmt::format(
        "it has format version {}, newer than this qtune reads ({}); resume with the qtune that "
        "wrote it",
        version->get<int64_t>(), kStateLogFormatVersion));
  }
  stored.header.format_version = version->get<int>();
  RETURN_IF_ERROR(GetString(json, "qtune_version", &stored.header.qtune_version));
  RETURN_IF_ERROR(GetString(json, "model_sha256", &stored.header.model_sha256));
  RETURN_IF_ERROR(GetString(json, "options_fingerprint", &stored.fingerprint));
  auto options = json.find("options");
  if (options == json.end()) return FieldError("options", "present");
  stored.header.options = *options;
  return stored;
}

// "threads: log 4, this run 8; seed: ..." for the options that differ. Objects on both
// sides are compared key by key: "calib_sha256 'calib.npy': log \"9f..\", this run \"c2..\"".
void DiffInto(const Json& logged, const Json& now, const std::string& prefix, std::string* diff) {
  auto describe = [](const Json& object, const std::string& key) {
    auto it = object.find(key);
    return it == object.end() ? std::string("(absent)") : Dump(*it);
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
    return fmt::format("log {}, this run {}", Dump(logged), Dump(now));
  }
  std::string diff;
  DiffInto(logged, now, "", &diff);
  return diff.empty() ? "(same values, different fingerprint)" : diff;
}

// True when `line`, the only line of a file and without a newline, is a header cut short
// or zero-filled by a crash: "<16 hex> {" so far, then nothing or only NUL bytes. Anything else is
// some other file, which Open() must not truncate.
bool IsTornHeader(std::string_view line) {
  size_t end = line.find('\0');
  if (end != std::string_view::npos &&
      line.find_first_not_of('\0', end) != std::string_view::npos) {
    return false;
  }
  std::string_view written = line.substr(0, end);
  const std::string_view shape = "0000000000000000 {";
  for (size_t i = 0; i < written.size() && i < shape.size(); ++i) {
    bool ok = i < kChecksumDigits ? std::isxdigit(static_cast<unsigned char>(written[i])) != 0
                                  : written[i] == shape[i];
    if (!ok) return false;
  }
  return true;
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

std::string StateHeader::OptionsFingerprint() const { return Sha256Hex(Dump(options)); }

std::string StateHeader::Id() const {
  return Sha256Hex(model_sha256 + " " + OptionsFingerprint()).substr(0, kChecksumDigits);
}

Json RecordToJson(const MeasurementRecord& record) {
  return Json{{"type", "measurement"},
              {"key", record.key},
              {"pattern", record.pattern},
              {"scheme", record.scheme},
              {"ok", record.ok},
              {"candidate_ms", LatenciesToJson(record.candidate_ms)},
              {"reference_ms", LatenciesToJson(record.reference_ms)},
              {"error_kind", record.error_kind},
              {"error_detail", record.error_detail},
              {"attempts", record.attempts},
              {"timestamp", record.timestamp},
              {"header_id", record.header_id}};
}

StatusOr<MeasurementRecord> RecordFromJson(const Json& json) {
  if (!json.is_object()) return InvalidArgumentError("a record is not a JSON object");
  MeasurementRecord record;
  std::string type;
  RETURN_IF_ERROR(GetString(json, "type", &type));
  if (type != "measurement") return InvalidArgumentError("record type \"" + type + "\" unknown");
  RETURN_IF_ERROR(GetString(json, "key", &record.key));
  if (record.key.empty()) return FieldError("key", "a non-empty string");
  RETURN_IF_ERROR(GetString(json, "pattern", &record.pattern));
  RETURN_IF_ERROR(GetString(json, "scheme", &record.scheme));
  auto ok = json.find("ok");
  if (ok == json.end() || !ok->is_boolean()) return FieldError("ok", "a bool");
  record.ok = ok->get<bool>();
  RETURN_IF_ERROR(GetLatencies(json, "candidate_ms", &record.candidate_ms));
  RETURN_IF_ERROR(GetLatencies(json, "reference_ms", &record.reference_ms));
  RETURN_IF_ERROR(GetString(json, "error_kind", &record.error_kind));
  RETURN_IF_ERROR(GetString(json, "error_detail", &record.error_detail));
  auto attempts = json.find("attempts");
  if (attempts == json.end() || !attempts->is_number_integer() || attempts->get<int64_t>() < 0 ||
      attempts->get<int64_t>() > 1000000) {
    return FieldError("attempts", "a non-negative integer");
  }
  record.attempts = attempts->get<int>();
  RETURN_IF_ERROR(GetString(json, "timestamp", &record.timestamp));
  RETURN_IF_ERROR(GetString(json, "header_id", &record.header_id));
  return record;
}

StatusOr<std::unique_ptr<StateLog>> StateLog::Open(const std::string& path,
                                                   const StateHeader& header,
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
    return log->WriteLine(MakeLine(HeaderToJson(header)));
  };
  if (contents.empty()) {
    RETURN_IF_ERROR(start_afresh());
    return log;
  }

  // Split into lines; the last one may lack its newline (torn).
  struct Line {
    size_t offset;
    std::string_view text;
    bool complete;
  };
  std::vector<Line> lines;
  const std::string_view text = contents;
  for (size_t offset = 0; offset < text.size();) {
    size_t newline = text.find('\n', offset);
    bool complete = newline != std::string_view::npos;
    size_t end = complete ? newline : text.size();
    lines.push_back({offset, text.substr(offset, end - offset), complete});
    offset = end + 1;
  }

  // The header.
  StatusOr<Json> header_json = ParseLine(lines[0].text);
  if (lines.size() == 1 && !lines[0].complete && IsTornHeader(lines[0].text)) {
    warn(fmt::format("{}:1: torn header ({} bytes) dropped; starting a new log", path,
                     lines[0].text.size()));
    RETURN_IF_ERROR(start_afresh());
    return log;
  }
  auto unreadable = [&](const std::string& why) {
    return DataLossError(fmt::format(
        "state log '{}' has an unreadable header ({}); is it a qtune autotune state log? {}", path,
        why, kForceNewAdvice));
  };
  if (!header_json.ok()) {
    // A newer format may have changed the line layout; still say "newer" when we can.
    size_t space = lines[0].text.find(' ');
    StatusOr<Json> parsed = space == std::string_view::npos
                                ? StatusOr<Json>(DataLossError("no JSON"))
                                : ParseUntrustedJson(lines[0].text.substr(space + 1), "header");
    Json guess = parsed.ok() ? std::move(*parsed) : Json();
    if (guess.is_object() && guess.value("type", Json()) == "header" &&
        guess.value("format_version", Json()).is_number_integer() &&
        guess["format_version"].get<int64_t>() > kStateLogFormatVersion) {
      header_json = std::move(guess);
    } else {
      return unreadable(header_json.status().message());
    }
  }
  StatusOr<StoredHeader> stored = HeaderFromJson(*header_json);
  if (!stored.ok()) {
    if (stored.status().code() == StatusCode::kFailedPrecondition) {  // newer or older format
      return DataLossError(fmt::format("state log '{}': {}; or {}", path, stored.status().message(),
                                       kForceNewAdvice));
    }
    return unreadable(stored.status().message());
  }
  if (stored->header.model_sha256 != header.model_sha256) {
    return FailedPreconditionError(fmt::format(
        "state log '{}' was recorded for another model (sha256 {}, this run's model is {}); "
        "move it away or {}",
        path, stored->header.model_sha256, header.model_sha256, kForceNewAdvice));
  }
  if (stored->fingerprint != header.OptionsFingerprint()) {
    return FailedPreconditionError(fmt::format(
        "state log '{}' was recorded with other options or data ({}); rerun with the same "
        "options and data or {}",
        path, OptionsDiff(stored->header.options, header.options), kForceNewAdvice));
  }

  // The measurements.
  log->size_ = static_cast<int64_t>(lines[0].offset + lines[0].text.size() + 1);
  for (size_t i = 1; i < lines.size(); ++i) {
    const Line& line = lines[i];
    bool last = i + 1 == lines.size();
    StatusOr<Json> json = ParseLine(line.text);
    if (last && (!line.complete || !json.ok())) {
      std::string why = line.complete ? json.status().message() : "no newline";
      warn(fmt::format("{}:{}: torn last record ({}, {} bytes) dropped; file truncated to {} bytes",
                       path, i + 1, why, line.text.size() + (line.complete ? 1 : 0), line.offset));
      if (::ftruncate(log->fd_, static_cast<off_t>(line.offset)) != 0 || ::fsync(log->fd_) != 0) {
        return OsError("cannot truncate the torn tail of state log", path, errno);
      }
      break;
    }
    log->size_ = static_cast<int64_t>(line.offset + line.text.size() + 1);
    if (!json.ok()) {
      warn(fmt::format("{}:{}: damaged record skipped ({})", path, i + 1, json.status().message()));
      continue;
    }
    StatusOr<MeasurementRecord> record = RecordFromJson(*json);
    if (!record.ok()) {
      warn(fmt::format("{}:{}: damaged record skipped ({})", path, i + 1,
                       record.status().message()));
      continue;
    }
    if (record->header_id != log->header_id_) {
      warn(fmt::format(
          "{}:{}: record of another run skipped (header_id \"{}\", this log's is \"{}\": it was "
          "measured for another model or with other options, e.g. copied from another log)",
          path, i + 1, record->header_id, log->header_id_));
      continue;
    }
    log->replayed_.push_back(std::move(record).value());
  }
  return log;
}

StateLog::~StateLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status StateLog::Append(MeasurementRecord record) {
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
  return WriteLine(MakeLine(RecordToJson(record)));
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

}  // namespace qtune::autotune
