// Placements and their export: a placement is the set of insertion points (reader node,
// input) that read a Q -> DQ'd tensor. The exporter turns one into a QuantPlan and a
// standard QDQ model with CALIBRATED scales (ModelOpt's standalone autotuner writes dummy
// 0.1 scales): every candidate tensor is calibrated once, before the search, so each
// candidate costs one clone + ExportQdq, no calibration and no pass pipeline.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "autotune/insertion_points.h"
#include "core/status.h"
#include "ir/graph.h"
#include "quant/quant_types.h"
#include "runtime/plan/plan.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::autotune {

using Placement = std::set<ResolvedPoint>;

// SHA-256 (first 16 hex digits) of the sorted points: the identity of a placement in the
// state log and the measurement cache.
std::string PlacementHash(const Placement& placement);

// The points of every enabled activation site of a (guarded) plan.
Placement PlacementOfPlan(const quant::QuantPlan& plan);

// Identity of what a compiled plan runs: per step its op type, kernel (Kernel::Describe)
// and the dtypes, sizes and layouts of its inputs and outputs; no names, no scale values.
// Two placements with equal keys run the same kernels on the same data: measuring the
// second tells nothing new.
std::string CompiledPlanKey(const runtime::Plan& plan);

struct ExporterInputs {
  // The cleaned float graph (passes::RunPipeline) the points refer to. Borrowed; must
  // outlive the exporter.
  const ir::Graph* float_graph = nullptr;
  // The rule-based plan (placement + guards) of that graph: its sites' configs, scale
  // groups and weight axes are reused for the same tensors and layers.
  quant::QuantPlan rule_plan;
  // Calibrated range of every tensor a candidate point may quantize.
  std::map<std::string, quant::TensorRange> ranges;
  // Config of activation tensors the rule plan does not quantize.
  quant::QuantizerConfig activation_config;
  // Shape inference results of float_graph (weight axes of layers the rules skipped).
  runtime::ValueInfoMap infos;
  quant::Target target = quant::Target::kCpu;
};

class PlacementExporter {
 public:
  explicit PlacementExporter(ExporterInputs inputs) : in_(std::move(inputs)) {}

  // One activation site per quantized tensor (consumers = the placement's readers), plus a
  // per-channel weight site for every Conv/ConvTranspose/Gemm/MatMul whose input 0 is in
  // the placement and whose weight is a constant. A point whose tensor has no usable range
  // (never calibrated, or dead: amax <= 0 or not finite) is left out.
  quant::QuantPlan PlanFor(const Placement& placement) const;

  // The QDQ model of `placement`: measure::ExportPlannedModel of PlanFor onto the float
  // graph, so a worker building the same plan writes the same model.
  StatusOr<std::unique_ptr<ir::Graph>> Export(const Placement& placement) const;

  const ir::Graph& float_graph() const { return *in_.float_graph; }

  // Whether a point can be quantized (its tensor has a usable range).
  bool Quantizable(const ResolvedPoint& point) const;

 private:
  ExporterInputs in_;
};

}  // namespace qtune::autotune
