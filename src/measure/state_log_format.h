// The state log's format (docs/formats/autotune-state.md), shared by its writer and every
// reader, in the manner of LevelDB's log_format.h: the typed header and measurement
// records, their JSON, the "<checksum> <json>" line framing, and the parse of a whole log
// text. autotune::StateLog (the writer, resume) and report::ReadAutotuneLog (qtune report)
// both read through ParseStateLog, so they skip, warn about and refuse the same lines.
//
//   line 1      header record: format version, qtune version, model SHA-256, the options
//               that change results and their fingerprint
//   line 2..n   one record per finished measurement (success or failure), each carrying
//               the header's id
//
// Every line is "<checksum> <json>\n", checksum = the first 16 hex digits of the SHA-256
// of the JSON text.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace qtune::measure {

// 2: records carry header_id. A format-1 log is refused (FailedPrecondition).
inline constexpr int kStateLogFormatVersion = 2;

struct StateHeader {
  int format_version = kStateLogFormatVersion;
  std::string qtune_version;
  std::string model_sha256;
  nlohmann::json options;  // every option that changes results (mode, threads, seed, ...)
  // SHA-256 (hex) of options.dump(): what a reader compares, with model_sha256.
  std::string OptionsFingerprint() const;
  // The first 16 hex digits of the SHA-256 of "<model_sha256> <OptionsFingerprint()>":
  // what every record of the log carries. Equal for two headers exactly when a resume
  // accepts one for the other.
  std::string Id() const;
};

// What one autotune measurement measured: the candidate's and the reference's content keys
// (placement hashes), the step of the search it serves, and whether it repeats an earlier
// one. Its text is a record's `key` (docs/formats/autotune-state.md), the same text for the
// same content, so a rerun finds what was measured before:
//   search "<candidate>:<reference>", its confirmation "<candidate>:<reference>/confirm",
//   the other steps "<step>:<candidate>:<reference>" (baseline, guard, final); the guard's
//   second measurement ends in "/again".
struct MeasurementKey {
  enum class Step { kSearch, kBaseline, kGuard, kFinal };
  Step step = Step::kSearch;
  std::string candidate;
  std::string reference;
  bool repeat =
      false;  // the second measurement of the same pair ("/confirm"; the guard's "/again")

  MeasurementKey Repeated() const {
    MeasurementKey k = *this;
    k.repeat = true;
    return k;
  }
  std::string ToString() const;
};

// One finished measurement. `key` identifies what was measured (MeasurementKey::ToString
// for autotune, tune::RowMeasurementKey for tune); replay looks results up by key.
struct MeasurementRecord {
  std::string key;
  std::string pattern;  // pattern id, or "baseline" / "final"; tune: the candidate
  std::string scheme;   // the scheme, as the tuner writes it (e.g. "0110")
  bool ok = false;
  std::vector<double> candidate_ms;  // per-round medians
  std::vector<double> reference_ms;  // per-round medians of the reference (may be empty)
  std::string error_kind;            // when !ok: timeout, crash, exit:N, unparsable, build,
                                     // connection
  std::string error_detail;
  int attempts = 1;
  std::string timestamp;  // ISO-8601 UTC, set by the writer when empty
  std::string header_id;  // StateHeader::Id() of the log it belongs to; set by the writer
};

// {"type":"measurement", ...}. Non-finite latencies are written as null (never as invalid
// JSON); RecordFromJson() refuses them, and anything but a finite number, like any missing
// or mistyped field (InvalidArgument naming the field).
nlohmann::json RecordToJson(const MeasurementRecord& record);
StatusOr<MeasurementRecord> RecordFromJson(const nlohmann::json& json);
nlohmann::json HeaderToJson(const StateHeader& header);

// One "<checksum> <json>\n" line (compact JSON; invalid UTF-8 becomes U+FFFD).
std::string EncodeLine(const nlohmann::json& json);
// The JSON object of one line without its newline; DataLoss saying what is wrong (no
// checksum, bad checksum, bad JSON, nested too deep).
StatusOr<nlohmann::json> DecodeLine(std::string_view line);

// One line of a log's text: where it starts, its bytes without the newline, and whether
// the newline is there (only the last line may lack it).
struct LogLine {
  size_t offset = 0;
  std::string_view text;
  bool complete = true;
};

// A whole log's text, read. Nothing is refused but the header: the reader decides what to
// do with records of another run and the torn tail.
struct ParsedStateLog {
  StateHeader header;
  std::string stored_fingerprint;  // the header's options_fingerprint as written
  struct Record {
    int line = 0;  // 1-based; the header is line 1
    MeasurementRecord record;
  };
  std::vector<Record> records;        // the good records whose header_id is the header's
  std::vector<std::string> warnings;  // "<path>:<line>: ..." for each line skipped
  // The last line when it is torn (no newline, or not a good line): it is not in `records`
  // and its warning says so; `good_size` is where the good lines end (its offset).
  bool torn_tail = false;
  size_t good_size = 0;
};

// Splits `text` into lines; the last may lack its newline.
std::vector<LogLine> SplitLogLines(std::string_view text);

// True when `line`, the only line of a file and without a newline, is a header cut short
// or zero-filled by a crash: "<16 hex> {" so far, then nothing or only NUL bytes.
bool IsTornHeader(std::string_view line);

// Parses a log's text (`path` names it in messages). Errors, all about line 1:
// DataLoss "unreadable header" (not a state log, or damaged), FailedPrecondition for a
// format version other than kStateLogFormatVersion (saying which, and what to do). The
// `advice` is appended to those messages (e.g. "--force-new starts over").
StatusOr<ParsedStateLog> ParseStateLog(std::string_view text, const std::string& path,
                                       const std::string& advice);

}  // namespace qtune::measure
