// Folders that only the current user may write: the caches qtune reads files back from
// (the worker's model cache, the checkpoint cache). A folder another local user can write
// to lets that user plant files that qtune would then trust, so such folders are refused,
// not repaired: qtune never chmods or chowns a folder it did not create.
#pragma once

#include <string>

#include "core/status.h"

namespace qtune {

struct PrivateDirOptions {
  // What the folder is, for messages: "the worker's model cache".
  std::string what = "the folder";
  // How to choose another folder, for messages: "pass --cache-dir DIR".
  std::string alternative;
};

// Creates `dir` (and missing parents) with mode 0700 when it does not exist; then checks
// that it is a folder (symbolic links to one are followed), owned by the effective user,
// and not writable by its group or by others. FailedPrecondition otherwise, naming the
// folder, what is wrong, and what to do (fix the folder, or options.alternative).
Status EnsurePrivateDir(const std::string& dir, const PrivateDirOptions& options = {});

// The check alone, for a folder that must exist already: NotFound when it does not;
// FailedPrecondition (as above) when it is not private.
Status CheckPrivateDir(const std::string& dir, const PrivateDirOptions& options = {});

}  // namespace qtune
