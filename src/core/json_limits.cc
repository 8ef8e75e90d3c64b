#include "core/json_limits.h"

#include <fmt/format.h>

#include <exception>

namespace qtune {
namespace {

constexpr size_t kMaxReasonChars = 200;

// nlohmann's what() without its "[json.exception.parse_error.101] " prefix, shortened
// (its "last read: '...'" part repeats the input, which may be long).
std::string ParseReason(const std::exception& e) {
  std::string reason = e.what();
  if (size_t close = reason.find("] ");
      reason.rfind("[json.exception.", 0) == 0 && close != std::string::npos) {
    reason.erase(0, close + 2);
  }
  if (reason.size() > kMaxReasonChars) reason = reason.substr(0, kMaxReasonChars) + "...";
  return reason;
}

}  // namespace

Status CheckJsonLimits(std::string_view text, const std::string& what, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return DataLossError(fmt::format(
        "{}: JSON text of {} bytes is larger than the {} bytes qtune reads; is it the right file?",
        what, text.size(), limits.max_bytes));
  }
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > limits.max_depth) {
          return DataLossError(fmt::format(
              "{}: JSON nested deeper than {} levels (at byte {}); qtune never writes such "
              "nesting, so the text is damaged or hostile; do not use it",
              what, limits.max_depth, i));
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced text is left to the parser to refuse
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

StatusOr<nlohmann::json> ParseUntrustedJson(std::string_view text, const std::string& what,
                                            const JsonLimits& limits) {
  RETURN_IF_ERROR(CheckJsonLimits(text, what, limits));
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {  // parse_error, or bad_alloc on a huge document
    return DataLossError(fmt::format("{}: not valid JSON ({})", what, ParseReason(e)));
  }
}

std::string DumpJson(const nlohmann::json& json, int indent) {
  return json.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace qtune
