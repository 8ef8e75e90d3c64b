// CHECK: aborts on a broken internal invariant (a bug in qtune, never bad user input:
// bad input returns a Status).
#pragma once

namespace qtune::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition);
}  // namespace qtune::internal

#define QTUNE_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::qtune::internal::CheckFailed(__FILE__, __LINE__, #cond))
