// Calibration data as the Python functions take it (`calib=`): a path, a list of paths, a
// numpy array, a dict {input name: array} or an iterable of such dicts (batches). Arrays
// are saved as .npy files in a temporary folder that lives as long as a CalibFiles.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace qtune::python {

// A temporary folder of .npy files, removed on destruction. REQUIRES: the GIL is held by
// whoever creates and destroys it.
class CalibFiles {
 public:
  CalibFiles() { dir_ = pybind11::module_::import("tempfile").attr("mkdtemp")("", "qtune_calib_"); }
  ~CalibFiles() {
    pybind11::module_::import("shutil").attr("rmtree")(dir_, pybind11::arg("ignore_errors") = true);
  }
  CalibFiles(const CalibFiles&) = delete;
  CalibFiles& operator=(const CalibFiles&) = delete;

  // Saves `array` as <dir>/<index>.npy; returns "NAME=<file>" (or the file alone for "").
  std::string Save(const std::string& name, const pybind11::object& array) {
    const std::string file = pybind11::str(pybind11::module_::import("os.path").attr("join")(
                                               dir_, std::to_string(count_++) + ".npy"))
                                 .cast<std::string>();
    pybind11::module_::import("numpy").attr("save")(file, array);
    return name.empty() ? file : name + "=" + file;
  }

 private:
  pybind11::object dir_;
  int count_ = 0;
};

// The calibration data specs (calibration_data.h) for `calib`; arrays are saved into
// `files` first. Raises qtune.InvalidArgument for anything else, saying what is accepted.
std::vector<std::string> CalibSpecs(const pybind11::object& calib, CalibFiles& files);

}  // namespace qtune::python
