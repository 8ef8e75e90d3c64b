#include "errors.h"

#include <map>

namespace qtune::python {
namespace py = pybind11;

namespace {

// The classes live as long as the interpreter (module attributes keep them alive).
PyObject* g_error = nullptr;
std::map<StatusCode, PyObject*>& ErrorClasses() {
  static auto* classes = new std::map<StatusCode, PyObject*>();
  return *classes;
}

// Python class name for a code: "InvalidArgument" for kInvalidArgument.
struct CodeName {
  StatusCode code;
  const char* name;
};
constexpr CodeName kCodeNames[] = {
    {StatusCode::kInvalidArgument, "InvalidArgument"},
    {StatusCode::kNotFound, "NotFound"},
    {StatusCode::kAlreadyExists, "AlreadyExists"},
    {StatusCode::kFailedPrecondition, "FailedPrecondition"},
    {StatusCode::kOutOfRange, "OutOfRange"},
    {StatusCode::kUnimplemented, "Unimplemented"},
    {StatusCode::kResourceExhausted, "ResourceExhausted"},
    {StatusCode::kDataLoss, "DataLoss"},
    {StatusCode::kUnavailable, "Unavailable"},
    {StatusCode::kDeadlineExceeded, "DeadlineExceeded"},
    {StatusCode::kInternal, "Internal"},
};

}  // namespace

void RegisterErrors(py::module_& module) {
  // "qtune.", not the extension's own name (qtune._qtune): users see and catch qtune.Error.
  const std::string prefix = "qtune.";
  g_error = PyErr_NewExceptionWithDoc((prefix + "Error").c_str(),
                                      "A qtune call failed; str() is the message the CLI prints.",
                                      PyExc_RuntimeError, nullptr);
  if (g_error == nullptr) throw py::error_already_set();
  module.add_object("Error", py::handle(g_error));
  for (const CodeName& entry : kCodeNames) {
    PyObject* cls = PyErr_NewException((prefix + entry.name).c_str(), g_error, nullptr);
    if (cls == nullptr) throw py::error_already_set();
    module.add_object(entry.name, py::handle(cls));
    ErrorClasses()[entry.code] = cls;
  }
}

void ThrowStatus(const Status& status) {
  auto it = ErrorClasses().find(status.code());
  PyObject* cls = it == ErrorClasses().end() ? g_error : it->second;
  PyErr_SetString(cls, status.ToString().c_str());
  throw py::error_already_set();
}

}  // namespace qtune::python
