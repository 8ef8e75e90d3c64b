// Levelled logging to stderr. The level is process-wide, set once at start-up
// (qtune --log-level or QTUNE_LOG_LEVEL) and read on every call.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "core/status.h"

namespace qtune {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Accepts debug, info, warning, error, off.
StatusOr<LogLevel> ParseLogLevel(std::string_view name);

void LogMessage(LogLevel level, std::string_view message);

template <typename... Args>
void Log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (level < GetLogLevel()) return;
  LogMessage(level, fmt::format(format, std::forward<Args>(args)...));
}

#define QTUNE_LOG_DEBUG(...) ::qtune::Log(::qtune::LogLevel::kDebug, __VA_ARGS__)
#define QTUNE_LOG_INFO(...) ::qtune::Log(::qtune::LogLevel::kInfo, __VA_ARGS__)
#define QTUNE_LOG_WARNING(...) ::qtune::Log(::qtune::LogLevel::kWarning, __VA_ARGS__)
#define QTUNE_LOG_ERROR(...) ::qtune::Log(::qtune::LogLevel::kError, __VA_ARGS__)

}  // namespace qtune
