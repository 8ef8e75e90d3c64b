// The calibration data of an autotune run identified by content, for the state log's
// header (docs/formats/autotune-state.md): the scales of every candidate come from this
// data, so a log measured with other data must never be replayed, even when the path is
// the same (a file overwritten in place).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace qtune::autotune {

// {spec: SHA-256 hex} for each `--calib` spec, keyed by the spec as given:
//   NAME=FILE.npy, FILE.npy, FILE.npz   the SHA-256 of the file's bytes;
//   DIR (an image folder)               the SHA-256 of "<name>\0<SHA-256 of its bytes>\n"
//                                       over every regular file directly in DIR, in name
//                                       order (a renamed, added, removed or changed file
//                                       changes it).
// Errors name the file or folder that cannot be read (NotFound when missing).
StatusOr<nlohmann::json> CalibrationDigests(const std::vector<std::string>& specs);

}  // namespace qtune::autotune
