// Shared by ort_layout_plan.cc and ort_layout_export.cc; not part of the quant API.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace qtune::quant {

// Ends the role of an output site on a Relu's output whose Relu the export removes (the
// site's Q then reads the Relu's input).
inline constexpr char kReluFoldedRole[] = "(Relu folded into its Q)";

// The output-channel axis of a Conv / ConvTranspose / Gemm / MatMul weight (input 1).
int64_t WeightChannelAxis(const ir::Node& node);

}  // namespace qtune::quant
