// External tensor data (ONNX `data_location: EXTERNAL`): resolving the file a tensor
// names and reading a byte range of it, with the safety rules the loader promises.
//
// A location is accepted only if it is a relative path that stays inside the model's
// folder: absolute paths, `..` components and symlinks that lead outside are refused.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/status.h"

namespace qtune::ir {

// Resolves `location` (as written in the model) against `dir`. Returns the canonical path
// of an existing regular file inside canonical(dir). InvalidArgument for refused paths,
// NotFound when the file does not exist.
StatusOr<std::string> ResolveExternalDataPath(const std::string& dir, const std::string& location);

// Size of a regular file in bytes.
StatusOr<int64_t> ExternalFileSize(const std::string& path);

// Reads exactly out.size() bytes starting at `offset`. OutOfRange if the range does not
// lie within the file.
Status ReadFileRange(const std::string& path, int64_t offset, std::span<std::byte> out);

// Parses a non-negative decimal integer as written in external_data offset/length
// entries; InvalidArgument naming `key` otherwise.
StatusOr<int64_t> ParseExternalDataNumber(const std::string& key, const std::string& text);

}  // namespace qtune::ir
