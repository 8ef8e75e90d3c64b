// `qtune quantize --auto`, part 3: measuring plans with per-group formats. One meter
// scores a whole choice (every group in its format); the sensitivity of one group in one
// format is the score of the choice with that group in that format and every other group
// in fp32 (the accuracy fallback's "one layer quantized" measure, per format).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/auto_groups.h"
#include "quant/calibration_data.h"
#include "quant/output_sqnr.h"

namespace qtune::quant {

// The exported model of `applied` on `float_graph`: QDQ export of the plan, and the bf16
// nodes in metadata_props (runtime::kBf16NodesMetadataKey) when there are any.
StatusOr<std::unique_ptr<ir::Graph>> ExportApplied(const ir::Graph& float_graph,
                                                   const AppliedFormats& applied);

class AutoMeter {
 public:
  // REQUIRES: `float_graph`, `plan` and `groups` outlive the meter. Errors: those of
  // OutputComparer::Create (no full batch of samples, no float output...).
  static StatusOr<std::unique_ptr<AutoMeter>> Create(const ir::Graph& float_graph,
                                                     const QuantPlan& plan,
                                                     const std::vector<AutoGroup>& groups,
                                                     CalibrationSource& source, int64_t samples,
                                                     int threads);

  // Output SQNR (dB) of the model with groups[i] in formats[i]; -inf when an output is NaN
  // or inf.
  StatusOr<double> SqnrDb(const std::vector<AutoFormat>& formats) const;

  // sqnr[g][k]: groups[g] alone in groups[g].formats[k], the others fp32 (fp32 itself is
  // +inf without a run). `progress` is called after each group.
  StatusOr<std::vector<std::vector<double>>> Sensitivity(
      const std::function<void()>& progress) const;

  int64_t samples() const { return comparer_->samples(); }
  const std::vector<std::string>& measured() const { return comparer_->measured(); }

 private:
  AutoMeter(const ir::Graph& float_graph, const QuantPlan& plan,
            const std::vector<AutoGroup>& groups)
      : float_graph_(float_graph), plan_(plan), groups_(groups) {}
  const ir::Graph& float_graph_;
  const QuantPlan& plan_;
  const std::vector<AutoGroup>& groups_;
  std::unique_ptr<OutputComparer> comparer_;
};

}  // namespace qtune::quant
