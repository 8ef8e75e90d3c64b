#include "calib_data.h"

#include "core/status.h"
#include "errors.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

[[noreturn]] void BadCalib(const std::string& why) {
  ThrowStatus(Status(StatusCode::kInvalidArgument,
                     "quantize(): calib must be a data path (.npy, .npz, image folder), a list "
                     "of paths, a numpy array, a dict {input name: array} or an iterable of "
                     "such dicts (batches); " +
                         why));
}

std::string InputName(const py::handle& key) {
  if (!py::isinstance<py::str>(key)) BadCalib("a dict key is not an input name (str)");
  return key.cast<std::string>();
}

}  // namespace

std::vector<std::string> CalibSpecs(const py::object& calib, CalibFiles& files) {
  py::module_ os = py::module_::import("os");
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance<py::str>(calib) || py::hasattr(calib, "__fspath__")) {
    return {os.attr("fspath")(calib).cast<std::string>()};
  }
  if (py::isinstance(calib, np.attr("ndarray"))) return {files.Save("", calib)};
  if (py::isinstance<py::dict>(calib)) {
    std::vector<std::string> specs;
    for (const auto& [key, value] : calib.cast<py::dict>()) {
      specs.push_back(files.Save(InputName(key), np.attr("asarray")(value)));
    }
    if (specs.empty()) BadCalib("the dict is empty");
    return specs;
  }
  if (!py::hasattr(calib, "__iter__"))
    BadCalib("got " + py::str(calib.get_type()).cast<std::string>());
  // A list of paths, or an iterable of {input name: batch} dicts (a DataLoader's shape):
  // the batches of each input are joined along the first axis.
  std::vector<std::string> paths;
  py::dict batches;  // input name -> list of arrays
  for (const py::handle& item : calib) {
    if (py::isinstance<py::str>(item) || py::hasattr(item, "__fspath__")) {
      paths.push_back(os.attr("fspath")(item).cast<std::string>());
    } else if (py::isinstance<py::dict>(item)) {
      for (const auto& [key, value] : item.cast<py::dict>()) {
        const py::str name(InputName(key));
        if (!batches.contains(name)) batches[name] = py::list();
        batches[name].cast<py::list>().append(np.attr("asarray")(value));
      }
    } else {
      BadCalib("an item of the iterable is a " + py::str(item.get_type()).cast<std::string>());
    }
  }
  if (!paths.empty() && batches.size() > 0) BadCalib("the iterable mixes paths and dicts");
  if (!paths.empty()) return paths;
  if (batches.size() == 0) BadCalib("the iterable is empty");
  std::vector<std::string> specs;
  for (const auto& [name, list] : batches) {
    specs.push_back(
        files.Save(name.cast<std::string>(), np.attr("concatenate")(list, py::arg("axis") = 0)));
  }
  return specs;
}

}  // namespace qtune::python
