#include "tune/checkpoint_test_util.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/sha256.h"
#include "ir/builder.h"

namespace qtune::tune::testing {
namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
  std::string pattern = (fs::temp_directory_path() / "qtune_checkpoint_test.XXXXXX").string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  EXPECT_NE(::mkdtemp(buf.data()), nullptr);
  path_ = buf.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

CheckpointContents SampleContents() {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 4});
  ir::Value* w = b.Initializer("w", Tensor::FromVector<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  b.Output(b.Op("MatMul", {x, w}));
  auto graph = b.Build();

  CheckpointContents c;
  c.manifest = NewCheckpointManifest();
  c.manifest.created_utc = "2026-09-01T12:00:00Z";  // fixed: tests compare bytes
  c.manifest.weights = FingerprintWeights(*graph);
  c.manifest.tuning = {{"chosen", "int8"}, {"threads", 2}, {"latency_ms", 1.25}};
  c.files["plan.json"] = R"({"placement": ["MatMul_0"]})";
  c.files["samples.npz"] = std::string(3000, '\x01') + "tail";
  return c;
}

LoadCheckpointOptions OptionsWithCache(const std::string& cache_dir) {
  LoadCheckpointOptions options;
  options.cache_dir = cache_dir;
  return options;
}

CraftedEntry ManifestEntry() {
  return {kManifestEntryName, ManifestToJson(SampleContents().manifest).dump(2)};
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

void RehashCheckpoint(const std::string& path) {
  WriteAll(path + ".sha256",
           Sha256Hex(ReadAll(path)) + "  " + fs::path(path).filename().string() + "\n");
}

void WriteCraftedCheckpoint(const std::string& path, const std::vector<CraftedEntry>& entries) {
  struct archive* a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_format_pax_restricted(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const CraftedEntry& e : entries) {
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.name.c_str());
    archive_entry_set_filetype(entry, e.filetype);
    archive_entry_set_perm(entry, 0644);
    if (e.hardlink) {
      archive_entry_set_hardlink(entry, e.link_target.c_str());
    } else if (!e.link_target.empty()) {
      archive_entry_set_symlink(entry, e.link_target.c_str());
    }
    bool has_data = e.filetype == AE_IFREG && !e.hardlink;
    archive_entry_set_size(entry, has_data ? static_cast<la_int64_t>(e.data.size()) : 0);
    ASSERT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << archive_error_string(a);
    if (has_data) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(entry);
  }
  ASSERT_EQ(archive_write_close(a), ARCHIVE_OK);
  archive_write_free(a);
  RehashCheckpoint(path);
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace qtune::tune::testing
