// Raises the default-domain (ai.onnx) opset of a graph, rewriting the nodes whose
// signature changed between the graph's opset and the target:
//
//   opset 10  Slice starts/ends/axes/steps attributes -> inputs; TopK k -> input;
//             Upsample -> Resize (Upsample is deprecated from 10 on)
//   opset 11  Clip min/max attributes -> inputs; Pad pads/value -> inputs;
//             Resize-10 gains the roi input (and opset 10's asymmetric/floor behaviour
//             as explicit attributes); Scatter -> ScatterElements
//   opset 12  Dropout ratio attribute -> input
//   opset 13  Squeeze/Unsqueeze axes, Split split, ReduceSum axes attributes -> inputs;
//             Softmax/LogSoftmax/Hardmax "coerce to 2-D at axis" semantics -> the opset-13
//             single-axis form (explicit axis when it is the last one, else
//             Flatten -> op -> Reshape)
//   opset 18  the other Reduce* axes attributes -> inputs; Split without `split` gets
//             num_outputs
//   opset 9   BatchNormalization loses `spatial` (only spatial = 1 converts)
//   opset 21  GroupNormalization changed its scale/bias shape: Unimplemented
//   opset 22-24  no change of meaning (new types and optional attributes only)
//
// Ops not listed kept their meaning over these versions (only types or optional features
// were added). A node the upgrade cannot convert makes it fail with Unimplemented naming
// the node. The bodies of nodes with subgraph attributes (If/Loop/Scan) are upgraded
// the same way, recursively (Scan-8 is refused). Other domains are left alone.
// On success the opset import and the IR version (IrVersionForOpset) are raised.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::passes {

struct UpgradeOpsetOptions {
  int64_t target_opset = 19;  // at most 24
};

// True when the graph changed. A graph already at or above the target is left alone
// (never downgraded). Errors: target above 24, an unconvertible node (Unimplemented).
// On error the graph may be partly converted.
StatusOr<bool> UpgradeOpset(ir::Graph& graph, const UpgradeOpsetOptions& options);

}  // namespace qtune::passes
