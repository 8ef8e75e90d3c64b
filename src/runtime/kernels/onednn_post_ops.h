// Activations of fused qtune ops as oneDNN eltwise post-ops.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::runtime {

// Appends the fused node's activation (attributes "activation"/"activation_params") to
// `post_ops`. Returns false when oneDNN has no equivalent (the caller falls back).
StatusOr<bool> AppendActivation(const ir::Node& fused_node, dnnl::post_ops& post_ops);

}  // namespace qtune::runtime
