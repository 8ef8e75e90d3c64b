// Reading ONNX backend node tests (onnx/backend/test/data/node/<test>/): model.onnx plus
// test_data_set_*/input_N.pb and output_N.pb, each a serialized onnx.TensorProto, or, for
// a graph input or output declared as a sequence or an optional, an onnx.SequenceProto or
// onnx.OptionalProto.
//
// The ir module keeps its protobuf converters internal (ir/onnx_convert.h); this helper is
// the test-side public entry for turning a TensorProto file into a qtune Tensor.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/run_value.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/session.h"

namespace qtune::conformance {

// Reads one serialized onnx.TensorProto. DataLoss if the file does not parse; the
// reader's errors otherwise (Unimplemented for types qtune tensors cannot hold, such as
// strings).
StatusOr<Tensor> ReadTensorFile(const std::string& path);

// The op types of the nodes of `model_path`'s main graph, in order, read straight from the
// proto (works for models LoadModel refuses). Empty if the file does not parse.
std::vector<std::string> ModelOpTypes(const std::string& model_path);

// Reads one serialized onnx.SequenceProto (`declared` is a sequence) or onnx.OptionalProto
// (`declared` is an optional) into a RunValue; `declared` (the graph value's type) supplies
// the element type of an empty sequence. An optional without a value is RunValue::None().
// DataLoss if the file does not parse; Unimplemented for nested sequences, maps and
// sparse tensors; InvalidArgument for a sequence whose elements' types differ.
StatusOr<RunValue> ReadValueFile(const std::string& path, const ir::TensorType& declared);

struct NodeTestData {
  runtime::NamedTensors inputs;  // tensor inputs by graph input name, graph order
  // Expected, one per graph output in graph order; an invalid Tensor where the output is a
  // sequence or an optional (its expected value is in value_outputs).
  std::vector<Tensor> outputs;
  // Graph inputs and outputs declared as sequences or optionals (ir::TensorType::kind), by
  // name in graph order. Empty for tensor-only models.
  std::vector<std::pair<std::string, RunValue>> value_inputs;
  std::vector<std::pair<std::string, RunValue>> value_outputs;

  bool has_values() const { return !value_inputs.empty() || !value_outputs.empty(); }
};

// Reads data set folder `data_dir` for `graph`: input_N.pb is graph input N and
// output_N.pb graph output N, read as a tensor or, by the value's declared kind, through
// ReadValueFile. ONNX <= 1.13 stored bfloat16 test data as uint16 (numpy had no bfloat16);
// such tensors are reinterpreted as the bfloat16 the graph declares.
StatusOr<NodeTestData> ReadNodeTestData(const ir::Graph& graph, const std::string& data_dir);

// Loads `model_path` with the graph inputs named in `constants` turned into initializers
// holding those values (qtune compiles for fixed shapes: a Reshape's shape or a Slice's
// starts must be known at compile time, and in real models they are).
StatusOr<std::unique_ptr<ir::Graph>> LoadModelWithConstantInputs(
    const std::string& model_path, const runtime::NamedTensors& constants);

// Test folders under `root` that hold a model.onnx, sorted by name (full paths).
std::vector<std::string> ListNodeTests(const std::string& root);

}  // namespace qtune::conformance
