// Shortens a list of warnings about the lines of a file, so a file of 40 000 damaged lines
// gives a few lines of output and a small report instead of 40 000.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace qtune {

// How many warnings of each kind SummarizeLineWarnings keeps.
inline constexpr size_t kWarningsShownPerKind = 5;

// Keeps the first `max_per_kind` warnings of each kind, in their order, and adds one line
// per kind that had more: "<file>: ... and N more lines like it (<kind>)", in the order the
// kinds first appeared. A warning's kind is its text without the leading "<file>:<line>: "
// and without anything from the first " (" on: "state.jsonl:7: damaged record skipped (bad
// checksum)" is of kind "damaged record skipped".
std::vector<std::string> SummarizeLineWarnings(const std::vector<std::string>& warnings,
                                               size_t max_per_kind = kWarningsShownPerKind);

}  // namespace qtune
