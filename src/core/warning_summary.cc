#include "core/warning_summary.h"

#include <cctype>
#include <map>
#include <string_view>

namespace qtune {
namespace {

struct Parts {
  std::string_view file;  // empty when the warning has no "<file>:<line>: " prefix
  std::string_view kind;
};

// Finds the first ":<digits>: " and splits around it.
Parts Split(std::string_view warning) {
  Parts parts{{}, warning};
  for (size_t colon = warning.find(':'); colon != std::string_view::npos;
       colon = warning.find(':', colon + 1)) {
    size_t end = colon + 1;
    while (end < warning.size() && std::isdigit(static_cast<unsigned char>(warning[end]))) ++end;
    if (end > colon + 1 && warning.substr(end, 2) == ": ") {
      parts.file = warning.substr(0, colon);
      parts.kind = warning.substr(end + 2);
      break;
    }
  }
  parts.kind = parts.kind.substr(0, parts.kind.find(" ("));
  return parts;
}

}  // namespace

std::vector<std::string> SummarizeLineWarnings(const std::vector<std::string>& warnings,
                                               size_t max_per_kind) {
  struct Kind {
    size_t order;
    size_t count = 0;
    std::string file;
  };
  std::map<std::string, Kind, std::less<>> kinds;
  std::vector<std::string> out;
  for (const std::string& warning : warnings) {
    Parts parts = Split(warning);
    auto it = kinds.find(std::string(parts.file) + '\n' + std::string(parts.kind));
    if (it == kinds.end()) {
      it = kinds
               .emplace(std::string(parts.file) + '\n' + std::string(parts.kind),
                        Kind{kinds.size(), 0, std::string(parts.file)})
               .first;
    }
    if (++it->second.count <= max_per_kind) out.push_back(warning);
  }
  std::vector<std::string> more(kinds.size());
  for (const auto& [key, kind] : kinds) {
    if (kind.count <= max_per_kind) continue;
    const std::string name = key.substr(key.find('\n') + 1);
    more[kind.order] = (kind.file.empty() ? "" : kind.file + ": ") + "... and " +
                       std::to_string(kind.count - max_per_kind) + " more lines like it (" + name +
                       ")";
  }
  for (std::string& line : more) {
    if (!line.empty()) out.push_back(std::move(line));
  }
  return out;
}

}  // namespace qtune
