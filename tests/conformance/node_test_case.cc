#include "conformance/node_test_case.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/onnx_convert.h"
#include "ir/onnx_io.h"

namespace qtune::conformance {
namespace {

// Test data files are small; this only bounds a corrupt file's declared size.
constexpr int64_t kMaxTestTensorBytes = int64_t{1} << 30;

StatusOr<std::string> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The tensor as `declared` where it is test data's uint16 spelling of bfloat16.
Tensor AsDeclaredType(Tensor t, DataType declared) {
  if (t.dtype() == DataType::kUint16 && declared == DataType::kBfloat16) {
    return Tensor::Borrow(DataType::kBfloat16, t.sizes(), t.raw_data()).Clone();
  }
  return t;
}

}  // namespace

StatusOr<Tensor> ReadTensorFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadBytes(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    return DataLossError("'" + path + "' is not a serialized onnx.TensorProto");
  }
  ir::TensorReader reader(/*external_data_dir=*/"", kMaxTestTensorBytes);
  return reader.Read(proto, "tensor file '" + path + "'");
}

std::vector<std::string> ModelOpTypes(const std::string& model_path) {
  auto bytes = ReadBytes(model_path);
  onnx::ModelProto model;
  if (!bytes.ok() || !model.ParseFromString(*bytes)) return {};
  std::vector<std::string> ops;
  for (const onnx::NodeProto& node : model.graph().node()) ops.push_back(node.op_type());
  return ops;
}

StatusOr<NodeTestData> ReadNodeTestData(const ir::Graph& graph, const std::string& data_dir) {
  NodeTestData data;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    std::string path = data_dir + "/input_" + std::to_string(i) + ".pb";
    ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(path));
    const ir::Value& input = *graph.inputs()[i];
    data.inputs.emplace_back(input.name(), AsDeclaredType(std::move(t), input.dtype()));
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    std::string path = data_dir + "/output_" + std::to_string(i) + ".pb";
    ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(path));
    data.outputs.push_back(AsDeclaredType(std::move(t), graph.outputs()[i]->dtype()));
  }
  return data;
}

StatusOr<std::unique_ptr<ir::Graph>> LoadModelWithConstantInputs(
    const std::string& model_path, const runtime::NamedTensors& constants) {
  ASSIGN_OR_RETURN(std::string bytes, ReadBytes(model_path));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    return DataLossError("'" + model_path + "' is not a serialized onnx.ModelProto");
  }
  onnx::GraphProto* graph = model.mutable_graph();
  for (const auto& [name, value] : constants) {
    auto& inputs = *graph->mutable_input();
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](const onnx::ValueInfoProto& v) { return v.name() == name; });
    if (it == inputs.end())
      return NotFoundError("'" + model_path + "' has no input '" + name + "'");
    inputs.erase(it);
    onnx::TensorProto* initializer = graph->add_initializer();
    ir::TensorToProto(value, initializer);
    initializer->set_name(name);
  }
  // Initializers that are not inputs need IR version 4.
  if (model.ir_version() < 4) model.set_ir_version(4);
  return ir::ParseModel(model.SerializeAsString(), model_path, ir::LoadOptions{});
}

std::vector<std::string> ListNodeTests(const std::string& root) {
  std::vector<std::string> dirs;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    if (std::filesystem::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace qtune::conformance
