// The pattern cache (--pattern-cache FILE): the best schemes found per pattern signature,
// carried from one tuning run to the next (another model with the same blocks, a later
// version of the same model). Its schemes seed the search; their latencies are never
// reused, because they were measured on another model. JSON, written atomically:
//   {"format": "qtune-pattern-cache", "version": 1,
//    "patterns": {"<signature>": ["0110", "0100", ...]}}   best first
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autotune/search.h"
#include "core/status.h"

namespace qtune::autotune {

using PatternSeeds = std::map<std::string, std::vector<std::string>>;  // signature -> schemes

// A missing file is an empty cache; a malformed one is an error naming the file.
StatusOr<PatternSeeds> LoadPatternCache(const std::string& path);

// Merges the result's best schemes (the final projection, then the measured winners) into
// `cache` (at most `max_per_pattern` per signature) and writes it to `path`.
Status SavePatternCache(const std::string& path, PatternSeeds cache, const SearchResult& result,
                        int max_per_pattern = 8);

}  // namespace qtune::autotune
