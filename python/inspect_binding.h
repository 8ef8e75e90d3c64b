// qtune.inspect(path, verify=True) -> dict: what `qtune inspect PATH --json` prints.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace qtune::python {

void BindInspect(pybind11::module_& module);

// A JSON value as the Python objects json.loads gives (dict, list, str, float, ...).
pybind11::object JsonToPython(const nlohmann::json& json);

}  // namespace qtune::python
