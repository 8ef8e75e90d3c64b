// ModelProto -> Graph.
#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "ir/onnx_convert.h"
#include "ir/onnx_io.h"
#include "ir/verify.h"

namespace qtune::ir {
namespace {

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string NodeWhat(const onnx::NodeProto& node, const std::string& name) {
  return "node " + Quote(name) + " (" + node.op_type() + ")";
}

// The domain of qtune's own fused operators (runtime/fusion/fused_ops.h). Only the compiler
// creates them, with invariants a model file cannot be trusted to keep; a file that uses
// them is refused.
constexpr char kInternalDomain[] = "qtune";

// The first node in `graph` or its subgraphs (If/Loop/Scan bodies) in qtune's internal
// domain, or null. `where` receives the path of subgraph-owning nodes above it.
const onnx::NodeProto* FindInternalOp(const onnx::GraphProto& graph, std::string& where) {
  for (const onnx::NodeProto& n : graph.node()) {
    if (n.domain() == kInternalDomain) return &n;
    for (const onnx::AttributeProto& a : n.attribute()) {
      std::vector<const onnx::GraphProto*> bodies;
      if (a.has_g()) bodies.push_back(&a.g());
      for (const onnx::GraphProto& g : a.graphs()) bodies.push_back(&g);
      for (const onnx::GraphProto* body : bodies) {
        if (const onnx::NodeProto* found = FindInternalOp(*body, where)) {
          where = "in a subgraph of node " + Quote(n.name()) + " (" + n.op_type() + ") " + where;
          return found;
        }
      }
    }
  }
  return nullptr;
}

Status RefuseInternalOps(const onnx::GraphProto& graph) {
  std::string where;
  const onnx::NodeProto* n = FindInternalOp(graph, where);
  if (n == nullptr) return Status::Ok();
  std::string name = n->name().empty() ? "(unnamed)" : Quote(n->name());
  if (!where.empty()) name += " " + where;
  return InvalidArgumentError("node " + name + " (" + n->op_type() +
                              ") is in domain 'qtune', which is reserved for qtune's internal "
                              "fused operators and cannot come from a model file; export the "
                              "model with standard ONNX operators");
}

// Assigns every node a unique, non-empty name: unnamed nodes get "<op_type>_<index>", later
// duplicates of a name get "_1", "_2", ... Original names are never taken by generated ones.
std::vector<std::string> AssignNodeNames(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> original;
  for (const auto& n : graph.node()) {
    if (!n.name().empty()) original.insert(n.name());
  }
  std::unordered_set<std::string> assigned;
  std::unordered_map<std::string, int> next_suffix;
  std::vector<std::string> names;
  names.reserve(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& n = graph.node(i);
    std::string base = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    std::string name = base;
    bool must_rename = n.name().empty() ? original.count(name) > 0 || assigned.count(name) > 0
                                        : assigned.count(name) > 0;
    if (must_rename) {
      int& k = next_suffix[base];
      do {
        name = base + "_" + std::to_string(++k);
      } while (original.count(name) > 0 || assigned.count(name) > 0);
    }
    assigned.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

Status ReadModelInfo(const onnx::ModelProto& model, ModelInfo& info) {
  info.ir_version = model.ir_version();
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    auto [it, inserted] = info.opset_imports.emplace(opset.domain(), opset.version());
    if (!inserted && it->second != opset.version()) {
      return InvalidArgumentError("opset for domain " + Quote(opset.domain()) +
                                  " is imported twice, as " + std::to_string(it->second) + " and " +
                                  std::to_string(opset.version()));
    }
  }
  info.producer_name = model.producer_name();
  info.producer_version = model.producer_version();
  info.domain = model.domain();
  info.model_version = model.model_version();
  info.doc_string = model.doc_string();
  info.graph_name = model.graph().name();
  for (const onnx::StringStringEntryProto& entry : model.metadata_props()) {
    info.metadata_props.emplace_back(entry.key(), entry.value());
  }
  return Status::Ok();
}

Status AddInputsAndInitializers(const onnx::GraphProto& proto, TensorReader& reader, Graph& graph) {
  std::unordered_set<std::string> initializer_names;
  for (const onnx::TensorProto& t : proto.initializer()) initializer_names.insert(t.name());
  for (const onnx::ValueInfoProto& input : proto.input()) {
    const std::string what = "graph input " + Quote(input.name());
    if (input.name().empty()) return InvalidArgumentError("a graph input has no name");
    // Old (IR < 4) exports list every initializer as an input too: it stays an initializer.
    if (initializer_names.count(input.name()) > 0) continue;
    if (!input.has_type()) return InvalidArgumentError(what + " has no type");
    auto type = TensorTypeFromProto(input.type());
    if (!type.ok()) return Status(type.status().code(), what + " " + type.status().message());
    if (type->dtype == DataType::kUndefined) {
      return InvalidArgumentError(what + " has no element type");
    }
    auto added = graph.AddInput(input.name(), std::move(type).value());
    if (!added.ok())
      return InvalidArgumentError("graph input " + Quote(input.name()) + " is declared twice");
  }
  if (proto.sparse_initializer_size() > 0) {
    return UnimplementedError("sparse initializer " +
                              Quote(proto.sparse_initializer(0).values().name()) +
                              " is not supported; convert it to a dense initializer");
  }
  for (const onnx::TensorProto& t : proto.initializer()) {
    const std::string what = "initializer " + Quote(t.name());
    if (t.name().empty()) return InvalidArgumentError("an initializer has no name");
    ASSIGN_OR_RETURN(Tensor tensor, reader.Read(t, what));
    auto added = graph.AddInitializer(t.name(), std::move(tensor));
    if (!added.ok()) {
      return InvalidArgumentError(what + " is declared twice (or also as a graph input)");
    }
  }
  return Status::Ok();
}

// Creates every node with its outputs, then connects inputs, so that nodes may appear in
// any order in the file.
Status AddNodes(const onnx::GraphProto& proto, TensorReader& reader, Graph& graph) {
  const std::vector<std::string> names = AssignNodeNames(proto);
  std::vector<Node*> nodes;
  nodes.reserve(proto.node_size());
  for (int i = 0; i < proto.node_size(); ++i) {
    const onnx::NodeProto& n = proto.node(i);
    const std::string what = NodeWhat(n, names[i]);
    if (n.op_type().empty()) {
      return InvalidArgumentError("node " + Quote(names[i]) + " (#" + std::to_string(i) +
                                  ") has no op_type");
    }
    NodeSpec spec;
    spec.op_type = n.op_type();
    spec.domain = n.domain();
    spec.name = names[i];
    spec.doc_string = n.doc_string();
    spec.inputs.assign(n.input_size(), nullptr);
    spec.output_names.assign(n.output().begin(), n.output().end());
    std::unordered_set<std::string> attribute_names;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (!attribute_names.insert(a.name()).second) {
        return InvalidArgumentError(what + " has attribute " + Quote(a.name()) + " twice");
      }
      ASSIGN_OR_RETURN(Attribute attribute, AttributeFromProto(a, reader, what));
      spec.attributes.push_back(std::move(attribute));
    }
    auto node = graph.AddNode(std::move(spec));
    if (!node.ok()) {
      for (const std::string& out : n.output()) {
        if (out.empty()) continue;
        Value* existing = graph.FindValue(out);
        std::string by = existing == nullptr               ? "this node twice"
                         : existing->producer() != nullptr ? existing->producer()->DebugName()
                         : existing->is_initializer()      ? "an initializer"
                                                           : "a graph input";
        if (existing != nullptr || std::count(n.output().begin(), n.output().end(), out) > 1) {
          return InvalidArgumentError(what + " writes " + Quote(out) +
                                      ", which is also produced by " + by +
                                      " (duplicate output name)");
        }
      }
      return node.status().WithContext(what);
    }
    nodes.push_back(*node);
  }
  for (int i = 0; i < proto.node_size(); ++i) {
    const onnx::NodeProto& n = proto.node(i);
    for (int k = 0; k < n.input_size(); ++k) {
      const std::string& input = n.input(k);
      if (input.empty()) continue;  // an omitted optional input
      Value* v = graph.FindValue(input);
      if (v == nullptr) {
        return InvalidArgumentError(NodeWhat(n, names[i]) + " reads " + Quote(input) +
                                    ", which no node, graph input or initializer produces");
      }
      graph.SetNodeInput(nodes[i], static_cast<size_t>(k), v);
    }
    std::vector<std::string> outer = OuterScopeNames(n);
    if (outer.empty()) continue;
    std::vector<Value*> implicit;
    implicit.reserve(outer.size());
    for (const std::string& name : outer) {
      Value* v = graph.FindValue(name);
      if (v == nullptr) {
        return InvalidArgumentError("a subgraph of " + NodeWhat(n, names[i]) + " reads " +
                                    Quote(name) + ", which is not defined in any enclosing graph");
      }
      implicit.push_back(v);
    }
    graph.SetImplicitInputs(nodes[i], std::move(implicit));
  }
  return Status::Ok();
}

Status AddOutputsAndValueInfo(const onnx::GraphProto& proto, Graph& graph) {
  for (const onnx::ValueInfoProto& output : proto.output()) {
    const std::string what = "graph output " + Quote(output.name());
    Value* v = graph.FindValue(output.name());
    if (v == nullptr) {
      return InvalidArgumentError(what + " is not produced by any node, input or initializer");
    }
    if (!graph.AddOutput(v).ok()) return InvalidArgumentError(what + " is listed twice");
    if (!output.has_type()) continue;
    auto type = TensorTypeFromProto(output.type());
    if (!type.ok()) return Status(type.status().code(), what + " " + type.status().message());
    if (v->producer() != nullptr && HasTypeInformation(*type)) v->set_type(std::move(type).value());
  }
  for (const onnx::ValueInfoProto& info : proto.value_info()) {
    Value* v = graph.FindValue(info.name());
    // value_info naming unknown values, or of non-tensor types, carries nothing we keep.
    if (v == nullptr || v->producer() == nullptr || v->is_graph_output()) continue;
    auto type = TensorTypeFromProto(info.type());
    if (!type.ok()) {
      if (type.status().code() == StatusCode::kUnimplemented) continue;
      return Status(type.status().code(),
                    "value_info " + Quote(info.name()) + " " + type.status().message());
    }
    if (HasTypeInformation(*type)) v->set_type(std::move(type).value());
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<Graph>> BuildGraph(const onnx::ModelProto& model,
                                            const LoadOptions& options) {
  if (!model.has_graph()) return InvalidArgumentError("the model has no graph");
  if (model.functions_size() > 0) {
    return UnimplementedError("the model defines local functions (" + model.functions(0).name() +
                              ", ...), which qtune does not support");
  }
  auto graph = std::make_unique<Graph>();
  RETURN_IF_ERROR(ReadModelInfo(model, graph->info()));
  TensorReader reader(options.external_data_dir, options.max_total_tensor_bytes);
  const onnx::GraphProto& proto = model.graph();
  RETURN_IF_ERROR(RefuseInternalOps(proto));
  RETURN_IF_ERROR(AddInputsAndInitializers(proto, reader, *graph));
  RETURN_IF_ERROR(AddNodes(proto, reader, *graph));
  RETURN_IF_ERROR(AddOutputsAndValueInfo(proto, *graph));
  RETURN_IF_ERROR(graph->SortTopologically());
  if (options.verify) RETURN_IF_ERROR(Verify(*graph));
  return graph;
}

Status NotAModel(const std::string& source_name, const std::string& why) {
  return DataLossError(source_name + " is not a valid ONNX model: " + why);
}

Status TooLarge(const std::string& source_name, int64_t size) {
  return ResourceExhaustedError(source_name + ": " + std::to_string(size) +
                                " bytes is above protobuf's 2 GiB limit; models this large "
                                "must keep their weights in external data");
}

// Parses with `parse` (which fills the proto and returns false on malformed data), then
// builds the graph. Protobuf failures stop here as Statuses.
template <typename ParseFn>
StatusOr<std::unique_ptr<Graph>> ParseAndBuild(const std::string& source_name,
                                               const LoadOptions& options, ParseFn parse) {
  try {
    onnx::ModelProto model;
    if (!parse(model)) {
      return NotAModel(source_name, "the protobuf data is truncated or corrupt");
    }
    auto graph = BuildGraph(model, options);
    if (!graph.ok()) return graph.status().WithContext(source_name);
    return graph;
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(source_name + ": out of memory while loading the model");
  } catch (const std::exception& e) {
    return NotAModel(source_name, e.what());
  }
}

}  // namespace

StatusOr<std::unique_ptr<Graph>> ParseModel(std::string_view bytes, const std::string& source_name,
                                            const LoadOptions& options) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return TooLarge(source_name, static_cast<int64_t>(bytes.size()));
  }
  return ParseAndBuild(source_name, options, [&](onnx::ModelProto& model) {
    return model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  });
}

StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path) {
  return LoadModel(path, LoadOptions());
}

StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path, const LoadOptions& options) {
  // Parsed straight from the file (no intermediate copy of a possibly large file).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string message = "cannot open '" + path + "': " + std::strerror(err);
    return err == ENOENT ? NotFoundError(message) : InvalidArgumentError(message);
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return InternalError("cannot stat '" + path + "'");
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError("'" + path + "' is not a regular file");
  if (st.st_size > INT_MAX) return TooLarge(path, st.st_size);

  LoadOptions resolved = options;
  if (resolved.external_data_dir.empty()) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    resolved.external_data_dir = parent.empty() ? "." : parent.string();
  }
  return ParseAndBuild(path, resolved, [&](onnx::ModelProto& model) {
    google::protobuf::io::FileInputStream stream(fd, /*block_size=*/1 << 20);
    return model.ParseFromZeroCopyStream(&stream) && stream.GetErrno() == 0;
  });
}

}  // namespace qtune::ir
