// Graph -> ModelProto, inline or with an external data file.
#include <climits>
#include <filesystem>
#include <unordered_set>

#include "core/file_io.h"
#include "ir/onnx_convert.h"
#include "ir/onnx_io.h"

namespace qtune::ir {
namespace {

constexpr int64_t kSmallAlignment = 64;
constexpr int64_t kPageAlignment = 4096;  // lets runtimes mmap large tensors
constexpr int64_t kPageAlignFrom = int64_t{64} << 10;

// Decides which tensors leave the model file and collects their bytes for the data file.
class ExternalData {
 public:
  ExternalData() = default;  // disabled: every tensor stays inline
  ExternalData(std::string location, int64_t threshold, bool initializers, bool attributes)
      : location_(std::move(location)),
        threshold_(threshold),
        initializers_(initializers),
        attributes_(attributes) {}

  // Writes `tensor` into `proto`, inline or as a reference into the data file.
  void Place(const Tensor& tensor, bool is_attribute, onnx::TensorProto* proto) {
    const int64_t bytes = PackedByteSize(tensor.dtype(), tensor.num_elements());
    const bool external = (is_attribute ? attributes_ : initializers_) && bytes >= threshold_;
    if (!external) {
      TensorToProto(tensor, proto);
      return;
    }
    proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
    for (int64_t s : tensor.sizes()) proto->add_dims(s);
    const int64_t align = bytes >= kPageAlignFrom ? kPageAlignment : kSmallAlignment;
    const int64_t offset = (static_cast<int64_t>(data_.size()) + align - 1) / align * align;
    data_.resize(static_cast<size_t>(offset), '\0');
    AppendFileBytes(tensor, &data_);
    proto->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    for (auto [key, value] : {std::pair<const char*, std::string>{"location", location_},
                              {"offset", std::to_string(offset)},
                              {"length", std::to_string(bytes)}}) {
      onnx::StringStringEntryProto* entry = proto->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
  }

  bool has_data() const { return !data_.empty(); }
  const std::string& data() const { return data_; }

 private:
  std::string location_;
  int64_t threshold_ = 0;
  bool initializers_ = false;
  bool attributes_ = false;
  std::string data_;
};

void FillValueInfo(const Value& value, onnx::ValueInfoProto* proto) {
  proto->set_name(value.name());
  TensorTypeToProto(value.type(), proto->mutable_type());
  if (!HasTypeInformation(value.type())) proto->clear_type();
}

Status FillNode(const Graph& graph, const Node& node, ExternalData& external,
                onnx::NodeProto* proto) {
  proto->set_op_type(node.op_type());
  if (!node.domain().empty()) proto->set_domain(node.domain());
  if (!node.name().empty()) proto->set_name(node.name());
  if (!node.doc_string().empty()) proto->set_doc_string(node.doc_string());
  for (Value* v : node.inputs()) proto->add_input(v == nullptr ? "" : v->name());
  for (Value* v : node.outputs()) proto->add_output(v == nullptr ? "" : v->name());
  bool has_subgraph = false;
  for (const Attribute& a : node.attributes()) {
    onnx::AttributeProto* ap = proto->add_attribute();
    if (a.type == AttributeType::kTensor || a.type == AttributeType::kTensors) {
      // Written here rather than by AttributeToProto: the tensors may go to external data.
      const bool single = a.type == AttributeType::kTensor;
      ap->set_name(a.name);
      ap->set_type(single ? onnx::AttributeProto::TENSOR : onnx::AttributeProto::TENSORS);
      std::vector<const Tensor*> tensors;
      if (single) tensors.push_back(&a.t);
      for (const Tensor& t : a.tensors) tensors.push_back(&t);
      for (const Tensor* t : tensors) {
        if (!t->is_valid()) {
          return InternalError(node.DebugName() + ": tensor attribute '" + a.name +
                               "' has no tensor");
        }
        external.Place(*t, /*is_attribute=*/true, single ? ap->mutable_t() : ap->add_tensors());
      }
      continue;
    }
    Status s = AttributeToProto(a, ap);
    if (!s.ok()) return s.WithContext(node.DebugName());
    has_subgraph |= a.type == AttributeType::kGraph || a.type == AttributeType::kGraphs;
  }
  if (has_subgraph) {
    // The subgraph protos name outer values; they must still be the node's implicit inputs.
    std::unordered_set<std::string> implicit;
    for (Value* v : node.implicit_inputs()) implicit.insert(v->name());
    for (const std::string& name : OuterScopeNames(*proto)) {
      if (implicit.count(name) == 0 || graph.FindValue(name) == nullptr) {
        return FailedPreconditionError("a subgraph of " + node.DebugName() + " reads '" + name +
                                       "', which is no longer one of the node's implicit inputs "
                                       "(was the value renamed or replaced?)");
      }
    }
  }
  return Status::Ok();
}

Status BuildModelProto(const Graph& graph, ExternalData& external, onnx::ModelProto& model) {
  const ModelInfo& info = graph.info();
  model.set_ir_version(info.ir_version);
  for (const auto& [domain, version] : info.opset_imports) {
    onnx::OperatorSetIdProto* opset = model.add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  if (!info.producer_name.empty()) model.set_producer_name(info.producer_name);
  if (!info.producer_version.empty()) model.set_producer_version(info.producer_version);
  if (!info.domain.empty()) model.set_domain(info.domain);
  if (info.model_version != 0) model.set_model_version(info.model_version);
  if (!info.doc_string.empty()) model.set_doc_string(info.doc_string);
  for (const auto& [key, value] : info.metadata_props) {
    onnx::StringStringEntryProto* entry = model.add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }

  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(info.graph_name.empty() ? "qtune_graph" : info.graph_name);
  for (Value* in : graph.inputs()) FillValueInfo(*in, g->add_input());
  for (Value* init : graph.initializers()) {
    onnx::TensorProto* t = g->add_initializer();
    external.Place(init->initializer(), /*is_attribute=*/false, t);
    t->set_name(init->name());
  }
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return FailedPreconditionError("cannot save: " + order.status().message());
  for (Node* node : *order) {
    RETURN_IF_ERROR(FillNode(graph, *node, external, g->add_node()));
    for (Value* out : node->outputs()) {
      if (out == nullptr || out->is_graph_output() || !HasTypeInformation(out->type())) continue;
      FillValueInfo(*out, g->add_value_info());
    }
  }
  for (Value* out : graph.outputs()) FillValueInfo(*out, g->add_output());
  return Status::Ok();
}

StatusOr<std::string> Serialize(const onnx::ModelProto& model) {
  const size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX)) {
    return ResourceExhaustedError("the serialized model would be " + std::to_string(size) +
                                  " bytes, above protobuf's 2 GiB limit; save it with external "
                                  "data (SaveOptions::use_external_data)");
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return InternalError("protobuf serialization failed");
  return bytes;
}

struct TensorBytes {
  int64_t initializers_total = 0;
  int64_t initializers_movable = 0;  // those at or above the external data threshold
  int64_t attributes_total = 0;
};

TensorBytes CountTensorBytes(const Graph& graph, int64_t threshold) {
  TensorBytes bytes;
  for (Value* init : graph.initializers()) {
    const Tensor& t = init->initializer();
    const int64_t n = PackedByteSize(t.dtype(), t.num_elements());
    bytes.initializers_total += n;
    if (n >= threshold) bytes.initializers_movable += n;
  }
  for (Node* node : graph.nodes()) {
    for (const Attribute& a : node->attributes()) {
      if (a.type == AttributeType::kTensor && a.t.is_valid()) {
        bytes.attributes_total += PackedByteSize(a.t.dtype(), a.t.num_elements());
      }
      for (const Tensor& t : a.tensors)
        bytes.attributes_total += PackedByteSize(t.dtype(), t.num_elements());
    }
  }
  return bytes;
}

Status CheckDataFileName(const std::string& name) {
  std::filesystem::path p(name);
  bool bad = name.empty() || p.is_absolute() || name.find('\0') != std::string::npos;
  for (const auto& part : p) bad |= part == "..";
  if (bad) {
    return InvalidArgumentError("external data file '" + name +
                                "' must be a relative path inside the model's folder");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> SerializeModel(const Graph& graph) {
  ExternalData inline_only;
  onnx::ModelProto model;
  RETURN_IF_ERROR(BuildModelProto(graph, inline_only, model));
  return Serialize(model);
}

Status SaveModel(const Graph& graph, const std::string& path) {
  return SaveModel(graph, path, SaveOptions());
}

Status SaveModel(const Graph& graph, const std::string& path, const SaveOptions& options) {
  namespace fs = std::filesystem;
  const fs::path model_path(path);
  const std::string data_name = options.external_data_file.empty()
                                    ? model_path.filename().string() + ".data"
                                    : options.external_data_file;
  const int64_t threshold = std::max<int64_t>(options.external_data_threshold_bytes, 0);
  const TensorBytes bytes = CountTensorBytes(graph, threshold);
  const int64_t total = bytes.initializers_total + bytes.attributes_total;
  const bool move_initializers = options.use_external_data || total > options.max_inline_bytes;
  const bool move_attributes = total - bytes.initializers_movable > options.max_inline_bytes;
  ExternalData external;
  if (move_initializers || move_attributes) {
    Status name_ok = CheckDataFileName(data_name);
    if (!name_ok.ok()) return name_ok.WithContext(path);
    external = ExternalData(data_name, threshold, move_initializers, move_attributes);
  }
  onnx::ModelProto model;
  Status built = BuildModelProto(graph, external, model);
  if (!built.ok()) return built.WithContext(path);
  auto serialized = Serialize(model);
  if (!serialized.ok()) return serialized.status().WithContext(path);
  if (external.has_data()) {
    const fs::path data_path = model_path.parent_path() / data_name;
    RETURN_IF_ERROR(WriteFileAtomic(data_path.string(), external.data()));
  }
  return WriteFileAtomic(path, *serialized);
}

}  // namespace qtune::ir
