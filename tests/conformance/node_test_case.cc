#include "conformance/node_test_case.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/onnx_convert.h"
#include "ir/onnx_io.h"

// onnx.SequenceProto and onnx.OptionalProto (after onnx_convert.h, which sets up ONNX_ML).
#include <onnx/onnx-data.pb.h>

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

// The sequence's tensors. The element type is the declared one if the graph gives it (an
// empty sequence has no other), else the first tensor's.
StatusOr<RunValue> FromSequenceProto(const onnx::SequenceProto& proto, DataType declared,
                                     ir::TensorReader& reader, const std::string& what) {
  if (proto.sparse_tensor_values_size() > 0 || proto.sequence_values_size() > 0 ||
      proto.map_values_size() > 0 || proto.optional_values_size() > 0) {
    return UnimplementedError(what +
                              " holds sparse tensors, sequences, maps or optionals; "
                              "qtune reads sequences of tensors only");
  }
  std::vector<Tensor> elements;
  DataType elem_dtype = declared;
  for (int i = 0; i < proto.tensor_values_size(); ++i) {
    const std::string element = what + " element " + std::to_string(i);
    ASSIGN_OR_RETURN(Tensor t, reader.Read(proto.tensor_values(i), element));
    t = AsDeclaredType(std::move(t), declared);
    if (elem_dtype == DataType::kUndefined) elem_dtype = t.dtype();
    if (t.dtype() != elem_dtype) {
      return InvalidArgumentError(element + " has type " + std::string(DataTypeName(t.dtype())) +
                                  " but the sequence holds " +
                                  std::string(DataTypeName(elem_dtype)));
    }
    elements.push_back(std::move(t));
  }
  return RunValue::Sequence(elem_dtype, std::move(elements));
}

StatusOr<RunValue> FromOptionalProto(const onnx::OptionalProto& proto, DataType declared,
                                     ir::TensorReader& reader, const std::string& what) {
  if (proto.has_tensor_value()) {
    ASSIGN_OR_RETURN(Tensor t, reader.Read(proto.tensor_value(), what));
    return RunValue::Of(AsDeclaredType(std::move(t), declared));
  }
  if (proto.has_sequence_value()) {
    return FromSequenceProto(proto.sequence_value(), declared, reader, what);
  }
  if (proto.has_sparse_tensor_value() || proto.has_map_value() || proto.has_optional_value()) {
    return UnimplementedError(what +
                              " holds a sparse tensor, a map or an optional; qtune reads "
                              "optional tensors and sequences only");
  }
  return RunValue::None();
}

}  // namespace

StatusOr<RunValue> ReadValueFile(const std::string& path, const ir::TensorType& declared) {
  ASSIGN_OR_RETURN(std::string bytes, ReadBytes(path));
  ir::TensorReader reader(/*external_data_dir=*/"", kMaxTestTensorBytes);
  const std::string what = "value file '" + path + "'";
  if (declared.kind == ir::ValueKind::kSequence) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromString(bytes)) {
      return DataLossError("'" + path + "' is not a serialized onnx.SequenceProto");
    }
    return FromSequenceProto(proto, declared.dtype, reader, what);
  }
  if (declared.kind == ir::ValueKind::kOptional) {
    onnx::OptionalProto proto;
    if (!proto.ParseFromString(bytes)) {
      return DataLossError("'" + path + "' is not a serialized onnx.OptionalProto");
    }
    return FromOptionalProto(proto, declared.dtype, reader, what);
  }
  ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(path));
  return RunValue::Of(AsDeclaredType(std::move(t), declared.dtype));
}

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
    const ir::Value& input = *graph.inputs()[i];
    if (!input.type().is_tensor()) {
      ASSIGN_OR_RETURN(RunValue v, ReadValueFile(path, input.type()));
      data.value_inputs.emplace_back(input.name(), std::move(v));
      continue;
    }
    ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(path));
    data.inputs.emplace_back(input.name(), AsDeclaredType(std::move(t), input.dtype()));
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    std::string path = data_dir + "/output_" + std::to_string(i) + ".pb";
    const ir::Value& output = *graph.outputs()[i];
    if (!output.type().is_tensor()) {
      ASSIGN_OR_RETURN(RunValue v, ReadValueFile(path, output.type()));
      data.value_outputs.emplace_back(output.name(), std::move(v));
      data.outputs.emplace_back();
      continue;
    }
    ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(path));
    data.outputs.push_back(AsDeclaredType(std::move(t), output.dtype()));
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
