// qtune.Error and its subclasses, one per StatusCode (qtune.InvalidArgument,
// qtune.NotFound, ...). A failed Status becomes the matching exception carrying the same
// text the CLI prints (Status::ToString()).
#pragma once

#include <pybind11/pybind11.h>

#include "core/status.h"

namespace qtune::python {

// Registers the exception classes on `module`. Call once, before ThrowIfError.
void RegisterErrors(pybind11::module_& module);

// REQUIRES: !status.ok(). Raises the exception for status.code() (never returns).
[[noreturn]] void ThrowStatus(const Status& status);

inline void ThrowIfError(const Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

template <typename T>
T ValueOrThrow(StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(value.status());
  return std::move(*value);
}

}  // namespace qtune::python
