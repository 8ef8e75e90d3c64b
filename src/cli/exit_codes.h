// Process exit codes of the qtune tool (documented in docs/cli.md).
#pragma once

#include "core/status.h"

namespace qtune::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // internal error or a failed check
inline constexpr int kExitUsage = 2;        // bad command line
inline constexpr int kExitBadInput = 3;     // a model, data or state file is missing or malformed
inline constexpr int kExitUnsupported = 4;  // valid input that qtune does not support yet

// Maps a Status to the exit code above and prints "qtune: error: <message>" to stderr
// when it is not OK.
int ReportAndExitCode(const Status& status);

// For a Status that says the command line is wrong (a flag's value, a missing flag): prints
// "qtune: error: <message>" and returns kExitUsage whatever the status code.
int ReportUsageError(const Status& status);

// For a recipe that did not load (quant::LoadRecipe; the error kinds in quant/recipe.h):
// a YAML recipe that asks for something invalid (InvalidArgument: an unknown key, format,
// algorithm, a bad block_size) is a usage error, kExitUsage, like a bad flag; a recipe file
// that is missing, unreadable or not a YAML recipe is bad input, kExitBadInput.
int ReportRecipeError(const Status& status);

}  // namespace qtune::cli
