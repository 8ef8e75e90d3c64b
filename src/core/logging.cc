#include "core/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "core/check.h"

namespace qtune {
namespace {

LogLevel InitialLevel() {
  const char* env = std::getenv("QTUNE_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kInfo;
  auto parsed = ParseLogLevel(env);
  return parsed.ok() ? *parsed : LogLevel::kInfo;
}

std::atomic<LogLevel>& LevelStorage() {
  static std::atomic<LogLevel> level{InitialLevel()};
  return level;
}

const char* LevelTag(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "";
  }
  return "";
}

}  // namespace

void SetLogLevel(LogLevel level) { LevelStorage().store(level); }
LogLevel GetLogLevel() { return LevelStorage().load(); }

StatusOr<LogLevel> ParseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warning" || name == "warn") return LogLevel::kWarning;
  if (name == "error") return LogLevel::kError;
  if (name == "off") return LogLevel::kOff;
  return InvalidArgumentError("unknown log level '" + std::string(name) +
                              "'; use debug, info, warning, error or off");
}

void LogMessage(LogLevel level, std::string_view message) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "qtune %s: %.*s\n", LevelTag(level), static_cast<int>(message.size()),
               message.data());
}

namespace internal {
void CheckFailed(const char* file, int line, const char* condition) {
  std::fprintf(stderr, "qtune: internal invariant broken at %s:%d: CHECK(%s)\n", file, line,
               condition);
  std::abort();
}
}  // namespace internal

}  // namespace qtune
