// Helpers shared by the fuzz targets of the JSON readers (state log, checkpoint, Redis):
// a scratch path per process, and the checksum a state-log line carries, so mutated lines
// can be re-signed and reach the JSON parser instead of stopping at the checksum.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/sha256.h"

namespace qtune::fuzz {

[[noreturn]] inline void FailTarget(const char* target, const std::string& what) {
  std::fprintf(stderr, "%s fuzz target: %s\n", target, what.c_str());
  std::abort();
}

// "<TMPDIR>/qtune_fuzz_<tag>_<pid>": one per process, as fuzzers may run side by side.
inline std::string ScratchPath(const std::string& tag) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/qtune_fuzz_" + tag + "_" +
         std::to_string(getpid());
}

inline void WriteScratchFile(const char* target, const std::string& path, std::string_view bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) FailTarget(target, "cannot write " + path);
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    FailTarget(target, "cannot write " + path);
  }
  std::fclose(f);
}

// Each line's "<16 hex> " prefix recomputed from the text after it (lines without a space
// at offset 16 get one), as autotune/state_log.cc writes them.
inline std::string ResignStateLogLines(std::string_view text) {
  std::string out;
  for (size_t offset = 0; offset < text.size();) {
    size_t newline = text.find('\n', offset);
    size_t end = newline == std::string_view::npos ? text.size() : newline;
    std::string_view line = text.substr(offset, end - offset);
    std::string_view body = line.size() > 17 && line[16] == ' ' ? line.substr(17) : line;
    out += Sha256Hex(body).substr(0, 16) + " ";
    out += body;
    if (newline != std::string_view::npos) out += '\n';
    offset = end + 1;
  }
  return out;
}

}  // namespace qtune::fuzz
