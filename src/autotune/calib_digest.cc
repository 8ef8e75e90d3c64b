#include "autotune/calib_digest.h"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "core/sha256.h"

namespace qtune::autotune {
namespace {

namespace fs = std::filesystem;

StatusOr<std::string> FolderDigest(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code file_ec;
    if (entry.is_regular_file(file_ec)) names.push_back(entry.path().filename().string());
  }
  if (ec) return NotFoundError("calibration folder '" + dir + "': " + ec.message());
  std::sort(names.begin(), names.end());
  Sha256 digest;
  for (const std::string& name : names) {
    ASSIGN_OR_RETURN(std::string file_sha, Sha256File((fs::path(dir) / name).string()));
    digest.Update(name);
    digest.Update(std::string_view("\0", 1));
    digest.Update(file_sha + "\n");
  }
  return digest.HexDigest();
}

// The file of a spec, as quant/calibration_data.cc reads it: NAME=FILE when the '=' comes
// before any '/', else the spec itself.
std::string SpecFile(const std::string& spec) {
  size_t eq = spec.find('=');
  if (eq != std::string::npos && spec.find('/') > eq) return spec.substr(eq + 1);
  return spec;
}

}  // namespace

StatusOr<nlohmann::json> CalibrationDigests(const std::vector<std::string>& specs) {
  nlohmann::json digests = nlohmann::json::object();
  for (const std::string& spec : specs) {
    std::error_code ec;
    if (fs::is_directory(spec, ec)) {
      ASSIGN_OR_RETURN(std::string sha, FolderDigest(spec));
      digests[spec] = sha;
      continue;
    }
    auto sha = Sha256File(SpecFile(spec));
    if (!sha.ok()) {
      return Status(sha.status().code(),
                    "calibration data '" + spec + "': " + sha.status().message());
    }
    digests[spec] = *sha;
  }
  return digests;
}

}  // namespace qtune::autotune
