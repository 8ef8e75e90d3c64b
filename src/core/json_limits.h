// JSON that comes from outside qtune (checkpoint manifests, plan.json, state-log lines,
// Redis jobs and results, worker replies, report inputs) and JSON that qtune writes.
//
// nlohmann::json recurses once per nesting level when it serializes, compares and
// copies, so a few kilobytes of "[[[[..." crash the process with a stack overflow.
// ParseUntrustedJson refuses such text before nlohmann sees it: one pass over the bytes
// counts the nesting depth (outside strings, escapes skipped) and the size.
//
// Text that qtune copies from outside (a benchmark command's stderr, a file name) may
// hold bytes that are not UTF-8, which nlohmann's dump() throws on (type_error.316).
// DumpJson writes each such byte as U+FFFD instead.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qtune {

struct JsonLimits {
  // Arrays and objects nested inside each other, the outermost counting 1. No format
  // qtune reads needs more than about 6.
  int max_depth = 64;
  // The whole text, in bytes.
  size_t max_bytes = size_t{64} << 20;
};

// OK when `text` stays within `limits`. The error (DataLoss) names `what` (a file and
// line, a Redis entry), the limit and the byte offset where it was passed. Does not check
// that the text is valid JSON.
Status CheckJsonLimits(std::string_view text, const std::string& what,
                       const JsonLimits& limits = {});

// CheckJsonLimits, then parses. Invalid JSON is a DataLoss error that names `what` and
// says where parsing stopped. Never throws.
StatusOr<nlohmann::json> ParseUntrustedJson(std::string_view text, const std::string& what,
                                            const JsonLimits& limits = {});

// json.dump(indent) with every byte that is not valid UTF-8 written as U+FFFD (never
// throws). indent -1 is compact, one line.
std::string DumpJson(const nlohmann::json& json, int indent = -1);

}  // namespace qtune
