#include "calib_data.h"

#include "core/status.h"
#include "errors.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

bool IsPath(const py::handle& value) {
  return py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__");
}

std::string PathOf(const py::handle& value) {
  return py::module_::import("os").attr("fspath")(value).cast<std::string>();
}

[[noreturn]] void BadCalib(const py::handle& calib) {
  ThrowStatus(Status(StatusCode::kInvalidArgument,
                     "qtune._qtune: calib must be a data path or a list of paths, got " +
                         py::str(py::type::of(calib).attr("__name__")).cast<std::string>() +
                         "; call qtune.quantize/tune/autotune/eval, which also take arrays, "
                         "dicts and readers"));
}

}  // namespace

std::vector<std::string> CalibSpecs(const py::object& calib) {
  if (IsPath(calib)) return {PathOf(calib)};
  if (!py::isinstance<py::list>(calib) && !py::isinstance<py::tuple>(calib)) BadCalib(calib);
  std::vector<std::string> specs;
  for (const py::handle& item : calib) {
    if (!IsPath(item)) BadCalib(item);
    specs.push_back(PathOf(item));
  }
  if (specs.empty()) BadCalib(calib);
  return specs;
}

}  // namespace qtune::python
