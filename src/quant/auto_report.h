// `qtune quantize --auto`: the result as a text table and as JSON (the "auto" object of
// `qtune quantize --json`, docs/formats/summary.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "quant/auto_quantize.h"

namespace qtune::quant {

// Per group: its first node (+ how many more), weights, candidates, the sensitivity of
// each candidate alone, the format chosen and why; then the frontier (effective bits ->
// predicted and measured SQNR), the choice, corrections and notes.
std::string AutoReportToText(const AutoReport& report);

// Every field of AutoReport; SQNR values that are +inf (exact) are the string "inf", -inf
// (NaN or inf outputs) "-inf", as JSON has no infinity.
nlohmann::json AutoReportToJson(const AutoReport& report);

}  // namespace qtune::quant
