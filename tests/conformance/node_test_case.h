// Reading ONNX backend node tests (onnx/backend/test/data/node/<test>/): model.onnx plus
// test_data_set_*/input_N.pb and output_N.pb, each a serialized onnx.TensorProto.
//
// The ir module keeps its protobuf converters internal (ir/onnx_convert.h); this helper is
// the test-side public entry for turning a TensorProto file into a qtune Tensor.
#pragma once

#include <memory>
#include <string>
#include <vector>

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

struct NodeTestData {
  runtime::NamedTensors inputs;  // by graph input name, graph order
  std::vector<Tensor> outputs;   // expected, graph output order
};

// Reads data set folder `data_dir` for `graph`: input_N.pb is graph input N and
// output_N.pb graph output N. ONNX <= 1.13 stored bfloat16 test data as uint16 (numpy had
// no bfloat16); such tensors are reinterpreted as the bfloat16 the graph declares.
StatusOr<NodeTestData> ReadNodeTestData(const ir::Graph& graph, const std::string& data_dir);

// Loads `model_path` with the graph inputs named in `constants` turned into initializers
// holding those values (qtune compiles for fixed shapes: a Reshape's shape or a Slice's
// starts must be known at compile time, and in real models they are).
StatusOr<std::unique_ptr<ir::Graph>> LoadModelWithConstantInputs(
    const std::string& model_path, const runtime::NamedTensors& constants);

// Test folders under `root` that hold a model.onnx, sorted by name (full paths).
std::vector<std::string> ListNodeTests(const std::string& root);

}  // namespace qtune::conformance
