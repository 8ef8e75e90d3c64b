#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace qtune::passes {

// Turns default-domain Constant nodes into initializers of the same name. Handles the
// `value` (dense tensor), `value_float`, `value_floats`, `value_int` and `value_ints`
// attributes; Constant nodes holding `sparse_value`, `value_string` or `value_strings`
// (or nothing usable) are left as they are. A Constant whose output nobody reads is left
// for remove_dead_nodes.
StatusOr<bool> ConstantsToInitializers(ir::Graph& graph, const PassOptions& options);

}  // namespace qtune::passes
