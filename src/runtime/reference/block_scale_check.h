// Block-scaled weights checked as the file stores them (issue 27, docs/cli.md "How bad
// input is answered"). NVFP4 writes its E4M3 block scales behind a DequantizeLinear by the
// fp32 per-tensor scale, so the blocked DequantizeLinear of the values reads a computed
// scale; once fold_constants or a run has made it, an error about it could only name that
// intermediate value. Session::Create runs this first, so a corrupt file is refused
// naming its own initializers.
#pragma once

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::runtime {

// For every DequantizeLinear with block_size whose x is an initializer and whose scale is
// an initializer or the output of a DequantizeLinear of an initializer (NVFP4's two-level
// scale): the block scale initializer's sizes must fit x and block_size, and its values
// must be finite. InvalidArgument naming the node, the block scale initializer and x
// otherwise. Computed scales are left to the DequantizeLinear kernel.
Status CheckBlockScaledInitializers(const ir::Graph& graph);

}  // namespace qtune::runtime
