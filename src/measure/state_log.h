// The autotune state log: an append-only JSON-lines file that makes a search (and a tune)
// crash-safe. Its format, records and line codec are measure/state_log_format.h
// (docs/formats/autotune-state.md); this is the writer. Append() writes one whole line
// with a single write() and fsync()s it, so `kill -9` at any moment loses at most the
// measurement in flight. A record copied from another log (another model, other options)
// is skipped on replay, never taken for this run's.
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
//  * an unreadable header, a format-1 log (records without a header_id) or a newer format
//    version is DataLoss (with the same advice);
//  * an empty file (killed before the header reached the disk), or one holding only a torn
//    header, is started afresh;
//  * a log another process holds open is refused (FailedPrecondition): the open log keeps
//    an exclusive flock().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/state_log_format.h"

namespace qtune::measure {

struct OpenOptions {
  bool force_new = false;
};

class StateLog {
 public:
  // Creates the file (and writes the header) when it does not exist; replays it otherwise.
  // `warnings` receives one line per dropped or skipped record (may be null: the lines are
  // then logged as warnings).
  static StatusOr<std::unique_ptr<StateLog>> Open(const std::string& path,
                                                  const measure::StateHeader& header,
                                                  const OpenOptions& options,
                                                  std::vector<std::string>* warnings);
  ~StateLog();
  StateLog(const StateLog&) = delete;
  StateLog& operator=(const StateLog&) = delete;

  // The records read back by Open(), in file order.
  const std::vector<measure::MeasurementRecord>& replayed() const { return replayed_; }

  // Appends and fsyncs one record, with header_id set to this log's. Errors name the file
  // (disk full, removed...).
  // InvalidArgument (nothing written) for an empty key or a non-finite latency: a failed
  // measurement is a record with ok = false, not an infinite latency. After a failed
  // fsync(), or a short write that could not be undone, every later Append() fails with
  // the same error: what reached the disk is unknown, so reopening (replay) is the only
  // way on.
  Status Append(measure::MeasurementRecord record);

  const std::string& path() const { return path_; }

  // Open() for a run (autotune, tune): WORK_DIR/state.jsonl, its skipped lines logged as
  // summarized warnings (core/warning_summary.h), and a log of another model, other
  // options or held by another process (FailedPrecondition) turned into InvalidArgument:
  // a work dir that is not this run's is a usage error (exit 2).
  static StatusOr<std::unique_ptr<StateLog>> OpenInWorkDir(const std::string& work_dir,
                                                           const measure::StateHeader& header,
                                                           bool force_new);

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
  std::vector<measure::MeasurementRecord> replayed_;
};

}  // namespace qtune::measure
