#include "autotune/pattern_cache.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "core/json_limits.h"

namespace qtune::autotune {

StatusOr<PatternSeeds> LoadPatternCache(const std::string& path) {
  PatternSeeds cache;
  if (!std::filesystem::exists(path)) return cache;
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const auto bad = [&](const std::string& what) {
    return DataLossError(path + ": not a qtune pattern cache (" + what +
                         "); remove it or pass another --pattern-cache file");
  };
  StatusOr<nlohmann::json> parsed = ParseUntrustedJson(text, "JSON");
  if (!parsed.ok()) return bad(parsed.status().message());
  nlohmann::json& j = *parsed;
  if (!j.is_object()) return bad("not a JSON object");
  if (j.value("format", "") != "qtune-pattern-cache")
    return bad("no \"format\": \"qtune-pattern-cache\"");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != 1) {
    return bad("unknown version");
  }
  if (!j.contains("patterns") || !j["patterns"].is_object()) return bad("no \"patterns\" object");
  for (const auto& [signature, schemes] : j["patterns"].items()) {
    if (!schemes.is_array()) return bad("pattern '" + signature + "' has no scheme list");
    for (const auto& s : schemes) {
      if (!s.is_string() || s.get<std::string>().find_first_not_of("01") != std::string::npos) {
        return bad("pattern '" + signature + "' has a scheme that is not a string of 0/1");
      }
      cache[signature].push_back(s.get<std::string>());
    }
  }
  return cache;
}

Status SavePatternCache(const std::string& path, PatternSeeds cache, const SearchResult& result,
                        int max_per_pattern) {
  for (const PatternReport& pattern : result.patterns) {
    if (pattern.points == 0) continue;
    std::vector<std::pair<double, std::string>> winners;
    for (const SchemeResult& s : pattern.schemes) {
      if (HasRatio(s) && s.ratio < 1.0) {
        winners.emplace_back(s.ratio, s.scheme);
      }
    }
    std::sort(winners.begin(), winners.end());
    std::vector<std::string> schemes{pattern.best_scheme};
    for (const auto& [ratio, scheme] : winners) schemes.push_back(scheme);
    for (const std::string& old : cache[pattern.signature]) schemes.push_back(old);
    std::vector<std::string> unique;
    for (const std::string& s : schemes) {
      if (std::find(unique.begin(), unique.end(), s) == unique.end()) unique.push_back(s);
      if (static_cast<int>(unique.size()) >= max_per_pattern) break;
    }
    cache[pattern.signature] = unique;
  }
  nlohmann::json j = {{"format", "qtune-pattern-cache"}, {"version", 1}, {"patterns", cache}};
  return WriteFileAtomic(path, DumpJson(j, 2) + "\n");
}

}  // namespace qtune::autotune
