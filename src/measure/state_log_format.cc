#include "measure/state_log_format.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "core/json_limits.h"
#include "core/sha256.h"

namespace qtune::measure {

std::string MeasurementKey::ToString() const {
  const char* step_prefix = step == Step::kBaseline ? "baseline:"
                            : step == Step::kGuard  ? "guard:"
                            : step == Step::kFinal  ? "final:"
                                                    : "";
  const char* suffix = !repeat ? "" : step == Step::kGuard ? "/again" : "/confirm";
  return step_prefix + candidate + ":" + reference + suffix;
}

namespace {

using Json = nlohmann::json;

constexpr size_t kChecksumDigits = 16;

std::string Checksum(std::string_view text) { return Sha256Hex(text).substr(0, kChecksumDigits); }

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

// The header as read back, with the stored options_fingerprint. FailedPrecondition for a
// format version other than this build's (saying what to do), InvalidArgument for a
// missing or mistyped field.
StatusOr<ParsedStateLog> HeaderFromJson(const Json& json) {
  ParsedStateLog parsed;
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
  parsed.header.format_version = version->get<int>();
  RETURN_IF_ERROR(GetString(json, "qtune_version", &parsed.header.qtune_version));
  RETURN_IF_ERROR(GetString(json, "model_sha256", &parsed.header.model_sha256));
  RETURN_IF_ERROR(GetString(json, "options_fingerprint", &parsed.stored_fingerprint));
  auto options = json.find("options");
  if (options == json.end()) return FieldError("options", "present");
  parsed.header.options = *options;
  return parsed;
}

// The header line's JSON: a good line, or one whose framing a newer format may have
// changed but whose JSON still says "header" with a newer format_version (so the message
// can say "newer"). DataLoss saying why otherwise.
StatusOr<Json> HeaderLineJson(std::string_view line) {
  StatusOr<Json> json = DecodeLine(line);
  if (json.ok()) return json;
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return json.status();
  StatusOr<Json> guess = ParseUntrustedJson(line.substr(space + 1), "header");
  if (guess.ok() && guess->is_object() && guess->value("type", Json()) == "header" &&
      guess->value("format_version", Json()).is_number_integer() &&
      (*guess)["format_version"].get<int64_t>() > kStateLogFormatVersion) {
    return guess;
  }
  return json.status();
}

}  // namespace

std::string StateHeader::OptionsFingerprint() const { return Sha256Hex(DumpJson(options)); }

std::string StateHeader::Id() const {
  return Sha256Hex(model_sha256 + " " + OptionsFingerprint()).substr(0, kChecksumDigits);
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

std::string EncodeLine(const Json& json) {
  std::string text = DumpJson(json);  // invalid UTF-8 becomes U+FFFD instead of throwing
  return Checksum(text) + " " + text + "\n";
}

StatusOr<Json> DecodeLine(std::string_view line) {
  if (line.size() < kChecksumDigits + 2 || line[kChecksumDigits] != ' ') {
    return DataLossError("not a \"<checksum> <json>\" line");
  }
  std::string_view text = line.substr(kChecksumDigits + 1);
  if (Checksum(text) != line.substr(0, kChecksumDigits)) return DataLossError("bad checksum");
  StatusOr<Json> json = ParseUntrustedJson(text, "record");  // depth-limited
  if (!json.ok() || !json->is_object()) return DataLossError("bad JSON");
  return json;
}

std::vector<LogLine> SplitLogLines(std::string_view text) {
  std::vector<LogLine> lines;
  for (size_t offset = 0; offset < text.size();) {
    size_t newline = text.find('\n', offset);
    bool complete = newline != std::string_view::npos;
    size_t end = complete ? newline : text.size();
    lines.push_back({offset, text.substr(offset, end - offset), complete});
    offset = end + 1;
  }
  return lines;
}

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

StatusOr<ParsedStateLog> ParseStateLog(std::string_view text, const std::string& path,
                                       const std::string& advice) {
  const std::vector<LogLine> lines = SplitLogLines(text);
  auto unreadable = [&](const std::string& why) {
    return DataLossError(fmt::format("{}:1: unreadable header ({}); is it a qtune state log? {}",
                                     path, why, advice));
  };
  if (lines.empty()) return unreadable("empty file");
  StatusOr<Json> header_json = HeaderLineJson(lines[0].text);
  if (!header_json.ok()) return unreadable(header_json.status().message());
  StatusOr<ParsedStateLog> parsed = HeaderFromJson(*header_json);
  if (!parsed.ok()) {
    if (parsed.status().code() == StatusCode::kFailedPrecondition) {  // newer or older format
      return DataLossError(
          fmt::format("state log '{}': {}; or {}", path, parsed.status().message(), advice));
    }
    return unreadable(parsed.status().message());
  }
  // The id records carry: of the header as written (its stored fingerprint), which is this
  // run's StateHeader::Id() whenever a resume accepts the header.
  const std::string header_id =
      Sha256Hex(parsed->header.model_sha256 + " " + parsed->stored_fingerprint)
          .substr(0, kChecksumDigits);
  parsed->good_size = lines[0].offset + lines[0].text.size() + 1;
  for (size_t i = 1; i < lines.size(); ++i) {
    const LogLine& line = lines[i];
    const int line_no = static_cast<int>(i) + 1;
    StatusOr<Json> json = DecodeLine(line.text);
    if (i + 1 == lines.size() && (!line.complete || !json.ok())) {
      std::string why = line.complete ? json.status().message() : "no newline";
      parsed->warnings.push_back(fmt::format("{}:{}: torn last record ({}, {} bytes) dropped", path,
                                             line_no, why,
                                             line.text.size() + (line.complete ? 1 : 0)));
      parsed->torn_tail = true;
      break;
    }
    parsed->good_size = line.offset + line.text.size() + 1;
    if (!json.ok()) {
      parsed->warnings.push_back(fmt::format("{}:{}: damaged record skipped ({})", path, line_no,
                                             json.status().message()));
      continue;
    }
    StatusOr<MeasurementRecord> record = RecordFromJson(*json);
    if (!record.ok()) {
      parsed->warnings.push_back(fmt::format("{}:{}: damaged record skipped ({})", path, line_no,
                                             record.status().message()));
      continue;
    }
    if (record->header_id != header_id) {
      parsed->warnings.push_back(fmt::format(
          "{}:{}: record of another run skipped (header_id \"{}\", this log's is \"{}\": it was "
          "measured for another model or with other options, e.g. copied from another log)",
          path, line_no, record->header_id, header_id));
      continue;
    }
    parsed->records.push_back({line_no, std::move(record).value()});
  }
  return parsed;
}

}  // namespace qtune::measure
