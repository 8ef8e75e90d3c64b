#include "measure/worker_model_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/file_io.h"
#include "core/logging.h"
#include "core/private_dir.h"
#include "core/sha256.h"

namespace qtune::measure {
namespace fs = std::filesystem;

StatusOr<std::string> DefaultWorkerCacheDir(const std::string& worker_name) {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr && v[0] == '/' ? v : "";  // relative values are ignored (XDG spec)
  };
  const std::string folder = "qtune/worker-" + worker_name;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/" + folder;
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/" + folder;
  return FailedPreconditionError(
      "no private folder for the worker's model cache: set HOME (or XDG_CACHE_HOME), or pass "
      "--cache-dir DIR (a folder only this user can write)");
}

StatusOr<WorkerModelCache> WorkerModelCache::Open(const std::string& dir,
                                                  const std::string& worker_name) {
  RETURN_IF_ERROR(EnsurePrivateDir(
      dir, {"the worker's model cache",
            "pass --cache-dir DIR (a folder only this user can write; created 0700)"}));
  return WorkerModelCache(dir, worker_name);
}

std::string WorkerModelCache::PathOf(const std::string& sha256, const char* extension) const {
  return (fs::path(dir_) / (sha256 + extension)).string();
}

std::optional<std::string> WorkerModelCache::Lookup(const std::string& sha256) {
  return Verified(PathOf(sha256), sha256, "model");
}

std::optional<std::string> WorkerModelCache::LookupBlob(const std::string& sha256) {
  return Verified(PathOf(sha256, ".bin"), sha256, "tensor blob");
}

std::optional<std::string> WorkerModelCache::Verified(const std::string& path,
                                                      const std::string& sha256, const char* what) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  std::string wrong;
  if (!S_ISREG(st.st_mode)) {
    wrong = "is not a plain file";
  } else if (StatusOr<std::string> actual = Sha256File(path); !actual.ok()) {
    wrong = "cannot be read (" + actual.status().message() + ")";
  } else if (*actual != sha256) {
    wrong = "does not have that SHA-256 (its bytes hash to " + *actual + ")";
  }
  std::error_code ec;
  if (!wrong.empty()) {
    QTUNE_LOG_WARNING(
        "worker {}: cached {} '{}' {}: damaged, or planted by someone who can write to "
        "the cache; removing it and fetching the {} again",
        worker_name_, what, path, wrong, what);
    fs::remove(path, ec);
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used
  return path;
}

StatusOr<std::string> WorkerModelCache::Store(const std::string& sha256, const std::string& bytes) {
  const std::string path = PathOf(sha256);
  RETURN_IF_ERROR(WriteFileAtomic(path, bytes));
  return path;
}

StatusOr<std::string> WorkerModelCache::StoreBlob(const std::string& sha256,
                                                  const std::string& bytes) {
  const std::string path = PathOf(sha256, ".bin");
  RETURN_IF_ERROR(WriteFileAtomic(path, bytes));
  return path;
}

void WorkerModelCache::Prune(const std::set<std::string>& keep, size_t max_models) {
  PruneFiles(".onnx", keep, max_models);
}

void WorkerModelCache::PruneBlobs(const std::set<std::string>& keep, size_t max_blobs) {
  PruneFiles(".bin", keep, max_blobs);
}

void WorkerModelCache::PruneFiles(const char* extension, const std::set<std::string>& keep,
                                  size_t max_files) {
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() == extension && !keep.count(e.path().string())) {
      files.emplace_back(e.last_write_time(ec), e.path());
    }
  }
  if (files.size() <= max_files) return;
  std::sort(files.begin(), files.end());
  for (size_t i = 0; i + max_files < files.size(); ++i) fs::remove(files[i].second, ec);
}

}  // namespace qtune::measure
