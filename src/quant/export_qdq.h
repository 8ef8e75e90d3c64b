// QDQ export: turns a float graph plus a QuantPlan into a standard ONNX QDQ model.
//
// For every enabled QuantSite it inserts QuantizeLinear -> DequantizeLinear on
// `site.value` and makes the listed consumers read the DequantizeLinear output (other
// readers keep the float tensor). Reads QuantSite::{kind, value, consumers, config,
// scale_group, enabled, range}; writes nothing back into the plan.
//
// Activations (per tensor, from site.range):
//   int8 symmetric    scale = amax / 127, zero point int8 0
//   int8 asymmetric   uint8, range [min(min, 0), max(max, 0)], scale = range / 255,
//                     zero point round(-lo / scale) (CPU style; config.symmetric = false)
//   fp8 e4m3          scale = amax / 448, zero point float8e4m3fn 0
//   Sites with the same non-empty scale_group share one scale initializer computed from
//   the largest amax (asymmetric: the widest min/max) of the group.
// Weights (must be float32 initializers): amax per channel along config.axis (or of the
//   whole tensor when axis is nullopt), symmetric int8 (amax / 127) or fp8 (amax / 448);
//   a zero or constant channel gets a tiny positive scale, never 0. The weight is stored
//   quantized (int8 / float8e4m3fn initializer) behind a DequantizeLinear carrying `axis`;
//   ExportOptions::float_weights keeps the float initializer behind Q -> DQ instead.
//   Biases are never quantized.
// Weight-only low-bit weights (int4, blockwise int8, clip/AWQ scales): see
//   weight_only_export.h; --target ort (plan.target) writes int4 as MatMulNBits. Opset 21.
//
// The default-domain opset is upgraded when needed (passes::UpgradeOpset): at least 13
// (per-channel int8), 19 for FP8 or float16 scales. The result passes ir::Verify.
//
// Names: the Q node of value X is "X_QuantizeLinear" with output "X_quantized"; the DQ
// node is "X_DequantizeLinear" with output "X_dequantized" (graph-unique variants with a
// "_1", "_2" suffix when taken). FloatNameOfDequantized maps such an output back to X.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/quant_types.h"

namespace qtune::quant {

struct ExportOptions {
  // Scales as float16 (opset >= 19). A Q/DQ pair whose scale cannot become float16 keeps a
  // float32 scale and adds a warning naming it: a Q that reads a graph input (the model's
  // interface is not changed), a non-float source tensor, or a scale outside float16's
  // normal range. Activations of a float32 model get Cast(float16) before the Q and
  // Cast(float32) after the DQ.
  bool fp16_scales = false;
  // Keep weights as float initializers behind Q -> DQ instead of storing them quantized.
  bool float_weights = false;
  // Lowest default-domain opset of the result (0: only what the formats need).
  int64_t min_opset = 0;
  // Run passes::FoldQdqCasts on the result.
  bool fold_casts = true;
};

// What happened to one site.
struct ExportedSite {
  std::string value;
  QuantSite::Kind kind = QuantSite::Kind::kActivation;
  QuantFormat format = QuantFormat::kInt8;
  bool is_unsigned = false;  // asymmetric uint8 activations
  float amax = 0.0f;         // activations: the (group) amax used; weights: largest channel
  float min_scale = 0.0f;    // smallest scale written (weights: over channels)
  float max_scale = 0.0f;
  int64_t channels = 1;  // 1 for per-tensor
  bool fp16_scale = false;
  int64_t block_size = 0;       // low-bit weights: elements per scale along K (0: per channel)
  double effective_bits = 0.0;  // low-bit weights: bits per weight, scales included
  std::string q_node;           // empty when the weight is stored quantized (DQ only)
  std::string dq_node;
  std::string dq_output;
};

struct ExportReport {
  int64_t opset_before = 0;
  int64_t opset_after = 0;
  std::vector<ExportedSite> sites;  // enabled sites, in plan order
  int disabled_sites = 0;
  int casts_folded = 0;               // by FoldQdqCasts
  std::vector<std::string> warnings;  // e.g. fp16 scales that were skipped
};

// Exports `plan` into `graph` in place. Errors name the site and say what to do: a site
// whose value or consumer does not exist, an activation without a calibrated range, a
// weight that is not a float32 initializer, an opset the upgrade cannot reach.
// On error the graph may be partly rewritten; callers export into a copy they can drop.
StatusOr<ExportReport> ExportQdq(ir::Graph& graph, const QuantPlan& plan,
                                 const ExportOptions& options);

// "X_dequantized" (or "X_dequantized_3") -> "X"; nullopt for other names.
std::optional<std::string> FloatNameOfDequantized(std::string_view name);

// Smallest scale the exporter writes (for zero/constant channels and dead activations).
inline constexpr float kMinExportScale = 1e-8f;

}  // namespace qtune::quant
