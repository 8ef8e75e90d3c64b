// CheckpointManifest <-> JSON, and the entry-name rule (declared in tune/checkpoint.h).
#include <fmt/format.h>

#include <ctime>

#include "tune/checkpoint.h"

#ifndef QTUNE_VERSION_STRING
#define QTUNE_VERSION_STRING "unknown"
#endif

namespace qtune::tune {

CheckpointManifest NewCheckpointManifest() {
  CheckpointManifest m;
  m.qtune_version = QTUNE_VERSION_STRING;
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  m.created_utc = buf;
  m.tuning = nlohmann::json::object();
  return m;
}

nlohmann::json ManifestToJson(const CheckpointManifest& manifest) {
  return {{"format_version", manifest.format_version},
          {"qtune_version", manifest.qtune_version},
          {"created_utc", manifest.created_utc},
          {"weights", WeightFingerprintToJson(manifest.weights)},
          {"tuning", manifest.tuning}};
}

StatusOr<CheckpointManifest> ManifestFromJson(const nlohmann::json& json,
                                              const std::string& where) {
  auto bad = [&](const std::string& what) { return DataLossError(where + ": " + what); };
  if (!json.is_object()) return bad("not a JSON object");
  // The version first: a newer format may have renamed any other field.
  auto version = json.find("format_version");
  if (version == json.end()) return bad("missing field 'format_version'");
  if (!version->is_number_integer()) return bad("field 'format_version' is not an integer");
  int64_t v = version->get<int64_t>();
  if (v > kCheckpointFormatVersion) {
    return UnimplementedError(fmt::format(
        "{}: checkpoint format_version {} is newer than this qtune reads (format_version {}); "
        "load it with a newer qtune, or tune again with this one",
        where, v, kCheckpointFormatVersion));
  }
  if (v < 1) return bad(fmt::format("field 'format_version' is {}; versions start at 1", v));

  CheckpointManifest m;
  m.format_version = static_cast<int>(v);
  for (auto [field, out] :
       {std::pair{"qtune_version", &m.qtune_version}, std::pair{"created_utc", &m.created_utc}}) {
    auto it = json.find(field);
    if (it == json.end()) return bad(fmt::format("missing field '{}'", field));
    if (!it->is_string()) return bad(fmt::format("field '{}' is not a string", field));
    *out = it->get<std::string>();
  }
  auto weights = json.find("weights");
  if (weights == json.end()) return bad("missing field 'weights'");
  ASSIGN_OR_RETURN(m.weights, WeightFingerprintFromJson(*weights, where + ": field 'weights'"));
  auto tuning = json.find("tuning");
  if (tuning == json.end()) return bad("missing field 'tuning'");
  m.tuning = *tuning;
  return m;
}

Status ValidateEntryName(const std::string& name) {
  auto is_alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  std::string shown =
      nlohmann::json(name).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (name.empty() || name.size() > 100) {
    return InvalidArgumentError("entry name " + shown + " must have 1 to 100 characters");
  }
  if (!is_alnum(name[0])) {
    return InvalidArgumentError("entry name " + shown + " must start with a letter or digit");
  }
  for (char c : name) {
    if (!is_alnum(c) && c != '.' && c != '_' && c != '-') {
      return InvalidArgumentError("entry name " + shown +
                                  " may hold only letters, digits, '.', '_' and '-' (no folders)");
    }
  }
  return Status::Ok();
}

}  // namespace qtune::tune
