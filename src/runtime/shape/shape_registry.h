// Static shape functions: the output data types and sizes of a node from its inputs'
// types and sizes (and, where the ONNX op needs them, the values of small constant
// inputs such as Reshape's shape). They let the compiler size every buffer and create
// every primitive before the first run.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime {

// What the compiler knows about one value.
struct ValueInfo {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> sizes;
  Tensor constant;  // valid when the value is known at compile time
  bool has_constant() const { return constant.is_valid(); }
};

struct ShapeArgs {
  const ir::Node& node;
  std::span<const ValueInfo* const> inputs;  // nullptr for an omitted optional input
  int64_t opset;
  // Parallel to node.implicit_inputs(): the outer values subgraph bodies read (If/Loop/Scan).
  std::span<const ValueInfo* const> implicit_inputs = {};

  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const ValueInfo& input(size_t i) const { return *inputs[i]; }
};

// Returns one ValueInfo per node output (dtype and sizes; constant left empty). An omitted
// optional output may be given any info.
using ShapeFn = StatusOr<std::vector<ValueInfo>> (*)(const ShapeArgs& args);

class ShapeRegistry {
 public:
  static const ShapeRegistry& Get();
  void Register(std::string op_type, ShapeFn fn);
  ShapeFn Find(std::string_view op_type) const;  // null when the op has no shape function

 private:
  std::unordered_map<std::string, ShapeFn> fns_;
};

void RegisterElementwiseShapes(ShapeRegistry& registry);
void RegisterNnShapes(ShapeRegistry& registry);
void RegisterRecurrentShapes(ShapeRegistry& registry);  // LSTM, GRU, RNN (shape_fns_rnn.cc)
void RegisterTensorShapes(ShapeRegistry& registry);
// CenterCropPad, Col2Im (shape_fns_crop_col2im.cc).
void RegisterCropCol2ImShapes(ShapeRegistry& registry);
// GridSample, RoiAlign, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
// (shape_fns_sampling_loss.cc).
void RegisterSamplingLossShapes(ShapeRegistry& registry);
void RegisterSignalShapes(ShapeRegistry& registry);  // MelWeightMatrix (shape_fns_signal.cc)
// Shrink, BitShift, EyeLike, ReverseSequence, Scatter, MVN, Det, Einsum (shape_fns_misc.cc).
void RegisterMiscShapes(ShapeRegistry& registry);
// ONNX quantization ops (shape_fns_quant.cc) and qtune's QConv/QMatMul/QAdd
// (shape_fns_quant_fused.cc).
void RegisterQuantShapes(ShapeRegistry& registry);
void RegisterQuantFusedShapes(ShapeRegistry& registry);
// If, Loop and Scan: their outputs from shape inference on their bodies (shape_fns_control.cc).
void RegisterControlFlowShapes(ShapeRegistry& registry);

// Helpers for shape functions.
// Multidirectional (numpy) broadcasting; InvalidArgument naming the node on mismatch.
StatusOr<std::vector<int64_t>> BroadcastSizes(const ir::Node& node, const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b);
Status ShapeError(const ir::Node& node, const std::string& message);
// Unimplemented, naming the node: `why` (e.g. "input 'shape' sets the output sizes") needs a
// value that is computed at run time. Compile refuses it; a Session defers the node to run
// time (shape/infer_shapes.h, InferShapesPartially).
Status ValueComputedAtRunTime(const ir::Node& node, const std::string& why);
ValueInfo MakeInfo(DataType dtype, std::vector<int64_t> sizes);

}  // namespace qtune::runtime
