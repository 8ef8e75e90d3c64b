// The autotune state log: an append-only JSON-lines file that makes a search crash-safe
// (docs/formats/autotune-state.md).
//
//   line 1      header record: format version, qtune version, model SHA-256, the options
//               that change results and their fingerprint
//   line 2..n   one record per finished measurement (success or failure), each carrying
//               the header's id: a record copied from another log (another model, other
//               options) is skipped on replay, never taken for this run's
//
// Every line is "<checksum> <json>\n", checksum = the first 16 hex digits of the SHA-256
// of the JSON text. Append() writes one whole line with a single write() and fsync()s it,
// so `kill -9` at any moment loses at most the measurement in flight.
//
// Open() replays an existing log:
//  * a torn last line (no newline, or a bad checksum on the last line) is dropped with a
//    warning and the file is truncated to the last good line, so appends continue cleanly;
//  * a damaged line in the middle (bad checksum, bad JSON, missing fields) is skipped with
//    a warning that names the file and line;
//  * a record whose header_id is not this header's is skipped with a warning;
//  * a header from another model or other options is refused (FailedPrecondition naming
//    what differs and saying "--force-new starts over"); with `force_new` the old log is
//    renamed to "<path>.old-<N>" and a new one started;
//  * a format-1 log (records without a header_id) is refused the same way;
//  * an unreadable header, or a newer format version, is DataLoss (with the same advice);
//  * an empty file (killed before the header reached the disk), or one holding only a torn
//    header, is started afresh;
//  * a log another process holds open is refused (FailedPrecondition): the open log keeps
//    an exclusive flock().
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace qtune::autotune {

// 2: records carry header_id. A format-1 log is refused (FailedPrecondition, --force-new).
inline constexpr int kStateLogFormatVersion = 2;

struct StateHeader {
  int format_version = kStateLogFormatVersion;
  std::string qtune_version;
  std::string model_sha256;
  nlohmann::json options;  // every option that changes results (mode, threads, seed, ...)
  // SHA-256 (hex) of options.dump(): what Open() compares, with model_sha256.
  std::string OptionsFingerprint() const;
  // The first 16 hex digits of the SHA-256 of "<model_sha256> <OptionsFingerprint()>":
  // what every record of the log carries. Equal for two headers exactly when Open()
  // accepts one for the other.
  std::string Id() const;
};

// One finished measurement. `key` identifies what was measured (the candidate placement's
// hash and the reference it was measured against); replay looks results up by key.
struct MeasurementRecord {
  std::string key;
  std::string pattern;  // pattern id, or "baseline" / "final"
  std::string scheme;   // the scheme, as the tuner writes it (e.g. "0110")
  bool ok = false;
  std::vector<double> candidate_ms;  // per-round medians
  std::vector<double> reference_ms;  // per-round medians of the reference (may be empty)
  std::string error_kind;            // when !ok: timeout, crash, exit:N, unparsable, build,
                                     // connection
  std::string error_detail;
  int attempts = 1;
  std::string timestamp;  // ISO-8601 UTC, set by Append() when empty
  std::string header_id;  // StateHeader::Id() of the log it belongs to; set by Append()
};

struct OpenOptions {
  bool force_new = false;
};

class StateLog {
 public:
  // Creates the file (and writes the header) when it does not exist; replays it otherwise.
  // `warnings` receives one line per dropped or skipped record (may be null: the lines are
  // then logged as warnings).
  static StatusOr<std::unique_ptr<StateLog>> Open(const std::string& path,
                                                  const StateHeader& header,
                                                  const OpenOptions& options,
                                                  std::vector<std::string>* warnings);
  ~StateLog();
  StateLog(const StateLog&) = delete;
  StateLog& operator=(const StateLog&) = delete;

  // The records read back by Open(), in file order.
  const std::vector<MeasurementRecord>& replayed() const { return replayed_; }

  // Appends and fsyncs one record, with header_id set to this log's. Errors name the file
  // (disk full, removed...).
  // InvalidArgument (nothing written) for an empty key or a non-finite latency: a failed
  // measurement is a record with ok = false, not an infinite latency. After a failed
  // fsync(), or a short write that could not be undone, every later Append() fails with
  // the same error: what reached the disk is unknown, so reopening (replay) is the only
  // way on.
  Status Append(MeasurementRecord record);

  const std::string& path() const { return path_; }

 private:
  StateLog(std::string path, std::string header_id, int fd)
      : path_(std::move(path)), header_id_(std::move(header_id)), fd_(fd) {}
  // Writes `line` with one write() and fsync()s it; on a short write, truncates back to
  // `size_` so the file never keeps half a line.
  Status WriteLine(const std::string& line);

  std::string path_;
  std::string header_id_;  // of the header the log was opened with
  int fd_ = -1;            // owned; holds an exclusive flock() while open
  int64_t size_ = 0;       // bytes of whole, good lines: where the next line starts
  Status broken_;          // not OK once the file's state is unknown (see Append)
  std::vector<MeasurementRecord> replayed_;
};

// {"type":"measurement", ...}. Non-finite latencies are written as null (never as invalid
// JSON); RecordFromJson() refuses them, and anything but a finite number, like any missing
// or mistyped field (InvalidArgument naming the field).
nlohmann::json RecordToJson(const MeasurementRecord& record);
StatusOr<MeasurementRecord> RecordFromJson(const nlohmann::json& json);

}  // namespace qtune::autotune
