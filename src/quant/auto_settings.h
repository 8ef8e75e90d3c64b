// `qtune quantize --auto`: its settings once the recipe's `auto:` block and the command
// line agree (the recipe is authoritative, as for the rest of a recipe).
#pragma once

#include <optional>

#include "core/status.h"
#include "quant/recipe.h"

namespace qtune::quant {

// `cli_auto`: --auto was given; `cli`: the values of --candidate-formats, --score-size,
// --cost-excluded-layers, --effective-bits, --latency-budget, --cost-model and --min-sqnr
// (given with --auto).
// Auto mode runs when --auto is given or the recipe has an `auto:` block; nullopt when it
// does not run. InvalidArgument errors, each naming the flag and the recipe key: a flag
// whose value contradicts the recipe's, two objectives or none (effective_bits,
// min_sqnr_db or latency_budget_ms: exactly one), a budget of the other cost model, auto flags
// without auto mode, an auto block together with an accuracy_fallback block (two searches over the
// same layers), an unknown format, and `target` ort (its layout is quantize_static's, not qtune's
// per-layer plan).
StatusOr<std::optional<AutoSettings>> ResolveAutoSettings(const Recipe& recipe, bool cli_auto,
                                                          const AutoSettings& cli,
                                                          std::optional<Target> cli_target);

}  // namespace qtune::quant
