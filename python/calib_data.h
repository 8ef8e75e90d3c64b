// Calibration data specs as the extension's functions take them (`calib=`): a path or a
// list of paths (calibration_data.h specs, NAME=FILE.npy included). Data in memory (arrays,
// dicts, readers, iterables of batches) is streamed into files by the package's Python
// side first (python/qtune/_calibration.py), never gathered here.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace qtune::python {

// The specs in `calib` (a str, an os.PathLike or a list/tuple of them). Raises
// qtune.InvalidArgument for anything else, saying to call through the qtune package.
std::vector<std::string> CalibSpecs(const pybind11::object& calib);

}  // namespace qtune::python
