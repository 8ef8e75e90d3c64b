// Where log messages go. By default LogMessage (core/logging.h) writes
// "qtune LEVEL: message" lines on stderr; an embedding (the Python module) installs a sink
// that hands them to its own logging instead. Implemented in core/logging.cc; declared
// here so that changing the sink does not touch logging.h, which nearly every file includes.
#pragma once

#include <functional>
#include <string_view>

#include "core/logging.h"

namespace qtune {

// Receives every message that passed the level filter (GetLogLevel()), with its level
// (kDebug..kError, never kOff). Contract for a sink:
// - it is called from any thread, possibly from several at once, and must be thread-safe;
// - it is called with no qtune lock held, so it may block (e.g. take an interpreter lock)
//   and may itself log, but it must not throw: an exception escaping it terminates;
// - `message` is borrowed for the duration of the call.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

// Replaces the process-wide sink; an empty function restores the stderr default.
// Thread-safe. A message being delivered while the sink is replaced goes to the sink that
// was current when it was logged (that sink is kept alive until the call returns).
void SetLogSink(LogSink sink);

}  // namespace qtune
