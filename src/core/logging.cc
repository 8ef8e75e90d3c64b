#include "core/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/check.h"
#include "core/log_sink.h"

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

// The current sink; null means stderr. Read under the mutex as a shared_ptr copy, so a
// sink is called with no lock held and outlives a concurrent SetLogSink.
std::mutex& SinkMutex() {
  static std::mutex mutex;
  return mutex;
}
std::shared_ptr<const LogSink>& SinkStorage() {
  static std::shared_ptr<const LogSink> sink;
  return sink;
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

void SetLogSink(LogSink sink) {
  auto next = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  std::lock_guard<std::mutex> lock(SinkMutex());
  SinkStorage() = std::move(next);
}

void LogMessage(LogLevel level, std::string_view message) {
  std::shared_ptr<const LogSink> sink;
  {
    std::lock_guard<std::mutex> lock(SinkMutex());
    sink = SinkStorage();
  }
  if (sink != nullptr) {
    (*sink)(level, message);
    return;
  }
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
