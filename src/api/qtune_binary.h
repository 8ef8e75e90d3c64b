// The qtune executable that Autotune and Tune measure with (a child `qtune
// measure-worker`): the one given, else $QTUNE_BINARY, else `qtune` on the PATH.
// Private to src/api/.
#pragma once

#include <string>

#include "core/status.h"

namespace qtune::api_internal {

// FailedPrecondition naming the three ways to provide it when none is found, or when the
// given or $QTUNE_BINARY path is not an executable file.
StatusOr<std::string> FindQtuneBinary(const std::string& given);

}  // namespace qtune::api_internal
