// Tolerant field access for the report's inputs: a missing or mistyped field reads as
// empty instead of throwing, so a report can show what a file has. The renderers check the
// fields a report cannot do without (report.cc) before they call these.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace qtune::report {

// A number; the strings "inf", "-inf" and "nan" (how some qtune JSON writes them) as such;
// nullopt for null (qtune's "infinite or NaN") or anything else.
inline std::optional<double> NumberField(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    if (s == "inf" || s == "Infinity") return INFINITY;
    if (s == "-inf" || s == "-Infinity") return -INFINITY;
    if (s == "nan" || s == "NaN") return NAN;
  }
  return std::nullopt;
}

inline std::string StringField(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

inline bool BoolField(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

// The array or object under `key`, or an empty JSON value of that kind.
inline const nlohmann::json& ArrayField(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kEmpty;
}
inline const nlohmann::json& ObjectField(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace qtune::report
