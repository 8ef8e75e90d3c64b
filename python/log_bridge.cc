// The sinks are called from any thread, usually one that released the GIL, and take the
// GIL for the Python call. No deadlock: the log sink runs with no qtune lock held, the
// progress sink with only its bar's lock, and no thread holding the GIL touches a bar
// (every binding releases the GIL around engine work, after calib_data.cc has read the
// user's arrays and iterables). Nothing escapes into C++: a Python exception raised in a handler
// of logger "qtune" or in the progress callback is reported through logger "qtune" (the
// callback's once per set_progress_callback; failing that, as an unraisable exception)
// and dropped.
#include "log_bridge.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "core/log_sink.h"
#include "core/logging.h"
#include "core/progress_sink.h"
#include "errors.h"

namespace qtune::python {
namespace py = pybind11;

namespace {

// False from the atexit hook on: the sinks then do nothing (the interpreter is going away).
std::atomic<bool> g_python_alive{false};

// The progress callback, whether it raised, and the per-label decile last logged: all
// guarded by the GIL. Heap-allocated and never freed, so no Python object is destroyed
// after finalization.
py::object& ProgressCallback() {
  static auto* callback = new py::object();
  return *callback;
}
bool g_callback_failed = false;
std::map<std::string, int64_t>& LoggedDecile() {
  static auto* deciles = new std::map<std::string, int64_t>();
  return *deciles;
}

int PythonLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return 10;  // logging.DEBUG
    case LogLevel::kInfo:
      return 20;  // logging.INFO
    case LogLevel::kWarning:
      return 30;  // logging.WARNING
    case LogLevel::kError:
    case LogLevel::kOff:
      return 40;  // logging.ERROR
  }
  return 40;
}

py::object Logger(const char* name) {
  return py::module_::import("logging").attr("getLogger")(name);
}

// REQUIRES: the GIL held and `error` the Python exception just caught.
void ReportDropped(py::error_already_set& error, const char* what) {
  try {
    Logger("qtune").attr("warning")("%s raised %s; ignored", what, std::string(error.what()));
  } catch (py::error_already_set& nested) {
    nested.discard_as_unraisable(what);
  }
}

void LogToPython(LogLevel level, std::string_view message) {
  if (!g_python_alive.load()) return;
  py::gil_scoped_acquire acquire;
  try {
    Logger("qtune").attr("log")(PythonLevel(level), "%s", py::str(message.data(), message.size()));
  } catch (py::error_already_set& error) {
    ReportDropped(error, "a handler of logger 'qtune'");
  }
}

// Without a callback: the start line, one line per 10% and the final line, as `qtune`
// prints them to a log file, at INFO on "qtune.progress".
bool WantsLine(const ProgressUpdate& update) {
  if (update.total <= 0) return true;  // the bar already steps when the count doubles
  auto& deciles = LoggedDecile();
  std::string label(update.label);
  if (update.final) {
    deciles.erase(label);
    return true;
  }
  const int64_t decile = update.done * 10 / update.total;
  auto [it, inserted] = deciles.try_emplace(label, -1);
  if (it->second == decile) return false;
  it->second = decile;
  return true;
}

void ProgressToPython(const ProgressUpdate& update) {
  if (!g_python_alive.load()) return;
  py::gil_scoped_acquire acquire;
  try {
    const py::object& callback = ProgressCallback();
    if (!callback.is_none() && callback) {
      callback(py::str(update.label.data(), update.label.size()), update.done, update.total);
      return;
    }
    if (!WantsLine(update)) return;
    Logger("qtune.progress").attr("info")("%s", py::str(update.line.data(), update.line.size()));
  } catch (py::error_already_set& error) {
    if (!std::exchange(g_callback_failed, true)) {
      ReportDropped(error, "the progress callback (reported once)");
    }
  }
}

void SetProgressCallback(const py::object& callback) {
  if (!callback.is_none() && !PyCallable_Check(callback.ptr())) {
    ThrowStatus(InvalidArgumentError(
        "set_progress_callback: expects a callable fn(label, done, total) or None, got " +
        std::string(py::str(py::type::of(callback).attr("__name__")))));
  }
  ProgressCallback() = callback;
  g_callback_failed = false;
}

void SetLogLevelByName(const std::string& name) { SetLogLevel(ValueOrThrow(ParseLogLevel(name))); }

}  // namespace

void BindLogging(py::module_& module) {
  ProgressCallback() = py::none();
  g_python_alive.store(true);
  SetLogSink(&LogToPython);
  SetProgressSink(&ProgressToPython);
  // At exit, before the interpreter is torn down: back to stderr, so a C++ thread still
  // running never waits for a GIL that no longer exists.
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    g_python_alive.store(false);
    SetLogSink(nullptr);
    SetProgressSink(nullptr);
    ProgressCallback() = py::none();
  }));

  module.def("set_progress_callback", &SetProgressCallback, py::arg("callback"),
             "Sends progress to CALLBACK(label, done, total) (total 0: unknown), called at "
             "most once per percent and once at the end of each task; None restores INFO "
             "lines on the logger 'qtune.progress'.");
  module.def("set_log_level", &SetLogLevelByName, py::arg("level"),
             "Sets the level below which qtune drops messages before they reach the logger "
             "'qtune': debug, info (the default, or QTUNE_LOG_LEVEL), warning, error or off.");
}

}  // namespace qtune::python
