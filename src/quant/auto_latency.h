// `qtune quantize --auto`, latency costs: per group and format, the time qtune's engine
// spends in that group's steps, from one profiled run per format (every group in that
// format where it is a candidate, the others fp32), as `qtune run --profile` times them.
//
// A step belongs to the group whose node or quantized value names it: the runtime names a
// fused node after its first node ("conv_fused", "conv_int8"), the export names a Q/DQ
// node after its value; the longest such name that is a prefix (at a '_' boundary) wins.
// Steps of no group (unquantized ops, reorders of graph inputs) are "unattributed": the
// same in every choice to first order, reported, and covered by the whole-model
// measurement the search corrects with.
//
// fp8 is emulated in qtune's engine, so its time here means nothing: fp8 is costed as
// int8 (what TensorRT's fp8 and int8 kernels roughly cost), or as measured when int8 is not
// a candidate of the group; the report says so.
#pragma once

#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/auto_groups.h"
#include "runtime/session.h"

namespace qtune::quant {

struct LatencyOptions {
  int threads = 1;  // engine threads: the deployment's, not the calibration's
  int runs = 5;     // timed runs after one warm-up; the median is taken
};

struct GroupLatencies {
  std::vector<std::vector<double>> ms;  // [group][k]: groups[g].formats[k]
  double unattributed_ms = 0;           // of the all-fp32 model
};

// `inputs`: one batch of the model's inputs. Errors: the engine's, naming the format.
StatusOr<GroupLatencies> ProfileGroupLatencies(const ir::Graph& float_graph, const QuantPlan& plan,
                                               const std::vector<AutoGroup>& groups,
                                               const runtime::NamedTensors& inputs,
                                               const LatencyOptions& options);

// The median time of a whole run of `graph` (one warm-up run first).
StatusOr<double> ModelLatencyMs(const ir::Graph& graph, const runtime::NamedTensors& inputs,
                                const LatencyOptions& options);

}  // namespace qtune::quant
