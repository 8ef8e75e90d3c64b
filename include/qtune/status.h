// qtune/status.h: the error model of qtune's public API (docs/cmake.md, "The C++ API").
//
// Every call that can fail returns a qtune::Status or a qtune::StatusOr<T>; none throws.
//
//   qtune::StatusOr<std::unique_ptr<qtune::Session>> session = qtune::Session::Open("m.onnx");
//   if (!session.ok()) { std::cerr << session.status().ToString() << "\n"; return 1; }
//   (*session)->Run(...);
//
// Status: ok(), code() (qtune::StatusCode: kInvalidArgument for a bad argument or model,
// kNotFound for a missing file, kDataLoss for a damaged file such as a checkpoint that does
// not match its .sha256, kUnimplemented for something qtune does not support yet,
// kFailedPrecondition for a missing prerequisite, kInternal for a bug), message() (names
// the file, node or tensor, and says what to do: the text `qtune` prints), ToString().
// StatusOr<T>: ok(), status(), value() / operator* / operator-> (REQUIRES: ok()).
//
// This is the same type qtune uses inside (installed as qtune/internal/core/status.h), so
// there is one error model, not a public copy of it.
#pragma once

#include "core/status.h"
