// A dynamic step: one node a GraphRunner runs when its inputs have arrived, on RunValues,
// allocating its outputs (their sizes are known only then):
//   - sequence and optional ops through their value kernels (reference/value_kernels.h);
//   - Identity of any kind of value;
//   - If, Loop, Scan and SequenceMap, their bodies run by nested GraphRunners (compiled
//     and cached per sizes like any stage: dynamic_control.cc);
//   - any other op through its reference kernel (NonZero, NonMaxSuppression, Unique, a
//     Reshape whose shape is not a small constant, ...).
#pragma once

#include <map>
#include <memory>
#include <span>
#include <vector>

#include "core/run_value.h"
#include "core/status.h"
#include "ir/graph.h"
#include "runtime/dynamic/graph_runner.h"

namespace qtune::runtime {

class BodyRunner;

class DynamicStep {
 public:
  // `node` must outlive the step. Unimplemented naming the node when no kernel runs it.
  static StatusOr<std::unique_ptr<DynamicStep>> Create(const ir::Node& node, int64_t opset,
                                                       const GraphRunnerOptions& options);
  ~DynamicStep();
  DynamicStep(const DynamicStep&) = delete;
  DynamicStep& operator=(const DynamicStep&) = delete;

  const ir::Node& node() const { return node_; }
  // `inputs`: the node's inputs, then its implicit inputs (outer values its bodies read).
  StatusOr<std::vector<RunValue>> Run(std::span<const RunValue> inputs);

 private:
  DynamicStep(const ir::Node& node, int64_t opset, const GraphRunnerOptions& options);
  // The body named `attribute`, parsed for these formal input types on first use.
  StatusOr<BodyRunner*> Body(const char* attribute, const std::vector<RunValue>& formal);
  StatusOr<std::vector<RunValue>> RunIf(std::span<const RunValue> inputs);
  StatusOr<std::vector<RunValue>> RunLoop(std::span<const RunValue> inputs);
  StatusOr<std::vector<RunValue>> RunScan(std::span<const RunValue> inputs);
  StatusOr<std::vector<RunValue>> RunSequenceMap(std::span<const RunValue> inputs);
  std::span<const RunValue> Implicit(std::span<const RunValue> inputs) const {
    return inputs.subspan(node_.num_inputs());
  }

  const ir::Node& node_;
  int64_t opset_;
  GraphRunnerOptions options_;
  std::map<std::pair<std::string, std::vector<int>>, std::unique_ptr<BodyRunner>> bodies_;
};

}  // namespace qtune::runtime
