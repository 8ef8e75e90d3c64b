// Routes qtune's log messages and progress into Python while the module is loaded
// (docs/python.md, "Logging and progress"): messages go to the `logging` logger "qtune"
// (debug/info/warning/error), progress to the callback of qtune.set_progress_callback or,
// without one, as INFO lines on the logger "qtune.progress". Nothing is written on stderr.
#pragma once

#include <pybind11/pybind11.h>

namespace qtune::python {

// Installs the log and progress sinks (core/log_sink.h, core/progress_sink.h), removes
// them again at interpreter exit, and defines set_progress_callback and set_log_level.
// Call once, at module import.
void BindLogging(pybind11::module_& module);

}  // namespace qtune::python
