// --import-qdq: seeds the search with the placement of an existing QDQ model (written by
// `qtune quantize`, ONNX Runtime's quantizer, ModelOpt...). A reader input counts as
// quantized when it reads a DequantizeLinear whose input comes from a QuantizeLinear
// (activation Q/DQ; DequantizeLinear of a stored weight alone does not count). Readers are
// matched to the points by node name and input index, so the QDQ model must come from the
// same float model (node names kept, as the common tools keep them).
#pragma once

#include <string>

#include "autotune/pattern_cache.h"
#include "autotune/search.h"
#include "core/status.h"

namespace qtune::autotune {

// One scheme per distinct projection of the imported placement on a pattern's regions
// (at most 3 per pattern). Errors: the file does not load (named), or it has no
// QuantizeLinear -> DequantizeLinear pair at all (not a QDQ model).
StatusOr<PatternSeeds> ImportQdqSeeds(const std::string& path,
                                      const std::vector<PatternInfo>& patterns);

}  // namespace qtune::autotune
