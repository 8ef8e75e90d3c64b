// Whole-file helpers. Errors name the path and the OS reason.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace qtune {

// Reads a whole file. Fails with NotFound if it does not exist, ResourceExhausted if it is
// larger than `max_bytes`.
StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes = int64_t{4} << 30);
// Writes `contents` to `path` atomically: a temporary file in the same folder, fsync,
// then rename; a crash leaves either the old file or the new one, never a torn one.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

}  // namespace qtune
