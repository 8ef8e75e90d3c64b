#include "api/calib_tensors.h"

#include <filesystem>

#include "core/npy.h"
#include "core/sha256.h"

namespace qtune::api_internal {
namespace fs = std::filesystem;

StatusOr<std::vector<std::string>> CalibSpecs(const std::vector<std::string>& files,
                                              const CalibTensors& tensors, const std::string& dir,
                                              const std::string& caller) {
  if (tensors.empty()) return files;
  if (!files.empty()) {
    return InvalidArgumentError(caller +
                                ": give calibration data as files (calib) or as tensors "
                                "(calib_tensors), not both");
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return InvalidArgumentError(caller + ": cannot create '" + dir +
                                "' for the calibration tensors: " + ec.message());
  }
  std::vector<std::string> specs;
  for (const auto& [name, tensor] : tensors) {
    const std::string written = (fs::path(dir) / "writing.npy").string();
    RETURN_IF_ERROR(WriteNpy(written, tensor).WithContext("calibration tensor '" + name + "'"));
    ASSIGN_OR_RETURN(std::string sha, Sha256File(written));
    const std::string file = (fs::path(dir) / (sha + ".npy")).string();
    fs::rename(written, file, ec);
    if (ec) return InternalError("cannot rename " + written + " to " + file + ": " + ec.message());
    specs.push_back(name + "=" + file);
  }
  return specs;
}

StatusOr<TemporaryCalib> TemporaryCalibSpecs(const std::vector<std::string>& files,
                                             const CalibTensors& tensors,
                                             const std::string& caller) {
  TemporaryCalib calib;
  if (!tensors.empty() && files.empty()) {
    ASSIGN_OR_RETURN(TempFolder dir, TempFolder::Create("qtune_calib_"));
    calib.files.emplace(std::move(dir));
  }
  ASSIGN_OR_RETURN(calib.specs,
                   CalibSpecs(files, tensors, calib.files ? calib.files->path() : "", caller));
  return calib;
}

}  // namespace qtune::api_internal
