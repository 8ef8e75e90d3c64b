// The engine-ready models of one `--auto` search, as the slow frontier tests measure them
// (auto_models_test.cc on the detector, auto_rec_test.cc on the recognizer): every layer
// in fp32 (the cleaned graph, exported as every other model is), every frontier point, and
// the search's choice, each with the label its table row prints.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/auto_quantize.h"
#include "quant/calibration_data.h"
#include "quant/quantize_model.h"

namespace qtune::quant::testing {

struct LabelledModel {
  std::string what;
  std::unique_ptr<ir::Graph> graph;
};

struct AutoSearchModels {
  AutoReport report;
  LabelledModel fp32;
  std::vector<LabelledModel> frontier;  // in the report's frontier order
  LabelledModel chosen;                 // labelled with options.min_sqnr_db (set it)
};

// Runs RunAutoSearch on a copy of base.plan and exports the models above.
// REQUIRES: `base` came from QuantizeModel with `recipe` (export_model may be off).
StatusOr<AutoSearchModels> SearchAndExport(const QuantizeModelResult& base, const Recipe& recipe,
                                           const InputSizes& sizes, CalibrationSource& source,
                                           const AutoOptions& options);

}  // namespace qtune::quant::testing
