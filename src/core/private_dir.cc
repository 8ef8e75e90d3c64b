#include "core/private_dir.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace qtune {
namespace {

namespace fs = std::filesystem;

std::string WhatToDo(const PrivateDirOptions& options) {
  return options.alternative.empty() ? "" : ", or " + options.alternative;
}

// Creates the missing folders of `dir`, each with mode 0700 (existing ones are left as
// they are).
Status CreateMissing(const fs::path& dir, const PrivateDirOptions& options) {
  std::error_code ec;
  fs::path partial;
  for (const fs::path& part : dir) {
    partial /= part;
    if (partial.empty() || partial == partial.root_path()) continue;
    if (::mkdir(partial.c_str(), 0700) == 0 || errno == EEXIST) continue;
    return FailedPreconditionError(fmt::format("cannot create {} '{}': {}{}", options.what,
                                               partial.string(), std::strerror(errno),
                                               WhatToDo(options)));
  }
  return Status::Ok();
}

}  // namespace

Status CheckPrivateDir(const std::string& dir, const PrivateDirOptions& options) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return NotFoundError(fmt::format("{} '{}' does not exist", options.what, dir));
    return FailedPreconditionError(fmt::format("cannot inspect {} '{}': {}{}", options.what, dir,
                                               std::strerror(errno), WhatToDo(options)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return FailedPreconditionError(
        fmt::format("{} '{}' is not a folder{}", options.what, dir, WhatToDo(options)));
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me) {
    return FailedPreconditionError(fmt::format(
        "refusing {} '{}': it belongs to user id {}, not to you (user id {}), so its owner "
        "could plant files in it; remove it (or chown it to yourself and chmod 700 it){}",
        options.what, dir, st.st_uid, me, WhatToDo(options)));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return FailedPreconditionError(fmt::format(
        "refusing {} '{}': its mode {:04o} lets other users write to it, so they could plant "
        "files in it; run chmod go-w '{}' (chmod 700 keeps it private){}",
        options.what, dir, st.st_mode & 07777, dir, WhatToDo(options)));
  }
  return Status::Ok();
}

Status EnsurePrivateDir(const std::string& dir, const PrivateDirOptions& options) {
  if (dir.empty()) {
    return InvalidArgumentError(fmt::format("{}: the folder name is empty", options.what));
  }
  Status checked = CheckPrivateDir(dir, options);
  if (checked.code() != StatusCode::kNotFound) return checked;
  RETURN_IF_ERROR(CreateMissing(fs::path(dir), options));
  return CheckPrivateDir(dir, options);
}

}  // namespace qtune
