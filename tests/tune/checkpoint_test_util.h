// Helpers for the checkpoint tests: scratch folders, sample contents, and archives crafted
// entry by entry with libarchive (for entries SaveCheckpoint would never write).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tune/checkpoint.h"

namespace qtune::tune::testing {

// A fresh folder under the temp dir, removed (with its contents) on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A manifest with a real fingerprint (of a small builder graph) and a tuning object, plus
// "plan.json" and "samples.npz" files.
CheckpointContents SampleContents();

// Options loading from `cache_dir` with the default caps.
LoadCheckpointOptions OptionsWithCache(const std::string& cache_dir);

struct CraftedEntry {
  std::string name;
  std::string data;
  unsigned int filetype = 0100000;  // AE_IFREG
  std::string link_target;          // for a symlink, or a hard link when hardlink is set
  bool hardlink = false;
};

// Writes `entries` as a tar.gz to `path` and a matching `<path>.sha256`, so loading gets
// past verification and the entry checks are what is tested.
void WriteCraftedCheckpoint(const std::string& path, const std::vector<CraftedEntry>& entries);
// A valid manifest.json entry (the manifest of SampleContents()).
CraftedEntry ManifestEntry();

// Rewrites `<path>.sha256` to match the file's current bytes.
void RehashCheckpoint(const std::string& path);

std::string ReadAll(const std::string& path);
void WriteAll(const std::string& path, const std::string& bytes);
// Names in a folder (not recursive), sorted; empty if it does not exist.
std::vector<std::string> ListDir(const std::string& dir);

}  // namespace qtune::tune::testing
