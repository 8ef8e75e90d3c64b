// TypeProto <-> TensorType and AttributeProto <-> Attribute.
#include <unordered_set>

#include "ir/onnx_convert.h"

namespace qtune::ir {
namespace {

const char* TypeKindName(const onnx::TypeProto& proto) {
  switch (proto.value_case()) {
    case onnx::TypeProto::kSequenceType:
      return "sequence";
    case onnx::TypeProto::kMapType:
      return "map";
    case onnx::TypeProto::kOptionalType:
      return "optional";
    case onnx::TypeProto::kSparseTensorType:
      return "sparse tensor";
    default:
      return "non-tensor";
  }
}

// Older exporters leave AttributeProto.type unset; infer it from the field that is set.
onnx::AttributeProto::AttributeType InferAttributeType(const onnx::AttributeProto& p) {
  using A = onnx::AttributeProto;
  if (p.floats_size() > 0) return A::FLOATS;
  if (p.ints_size() > 0) return A::INTS;
  if (p.strings_size() > 0) return A::STRINGS;
  if (p.tensors_size() > 0) return A::TENSORS;
  if (p.graphs_size() > 0) return A::GRAPHS;
  if (p.has_f()) return A::FLOAT;
  if (p.has_i()) return A::INT;
  if (p.has_s()) return A::STRING;
  if (p.has_t()) return A::TENSOR;
  if (p.has_g()) return A::GRAPH;
  if (p.has_sparse_tensor()) return A::SPARSE_TENSOR;
  if (p.has_tp()) return A::TYPE_PROTO;
  return A::UNDEFINED;
}

}  // namespace

namespace {

StatusOr<TensorType> FromTensorProtoType(const onnx::TypeProto::Tensor& tensor) {
  TensorType type;
  const int32_t elem = tensor.elem_type();
  if (elem != 0 && !IsKnownDataType(elem)) {
    return InvalidArgumentError("has unknown data type " + std::to_string(elem) +
                                " (qtune knows 1.." + std::to_string(kMaxKnownDataType) + ")");
  }
  type.dtype = static_cast<DataType>(elem);
  if (tensor.has_shape()) {
    std::vector<Dim> dims;
    dims.reserve(tensor.shape().dim_size());
    for (const onnx::TensorShapeProto::Dimension& d : tensor.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          return InvalidArgumentError("has a negative dimension " + std::to_string(d.dim_value()));
        }
        dims.push_back(Dim::Known(d.dim_value()));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        dims.push_back(Dim::Symbolic(d.dim_param()));
      } else {
        dims.push_back(Dim::Unknown());
      }
    }
    type.shape = Shape(std::move(dims));
  }
  return type;
}

// A sequence's element type must be a tensor (ONNX allows nested sequences and maps there,
// which qtune does not run).
StatusOr<TensorType> FromSequenceProtoType(const onnx::TypeProto::Sequence& sequence) {
  const onnx::TypeProto& elem = sequence.elem_type();
  if (elem.value_case() == onnx::TypeProto::VALUE_NOT_SET) {
    TensorType type;
    type.kind = ValueKind::kSequence;
    return type;
  }
  if (elem.value_case() != onnx::TypeProto::kTensorType) {
    return UnimplementedError(std::string("is a sequence of ") + TypeKindName(elem) +
                              " values; qtune handles sequences of tensors only");
  }
  ASSIGN_OR_RETURN(TensorType type, FromTensorProtoType(elem.tensor_type()));
  type.kind = ValueKind::kSequence;
  return type;
}

}  // namespace

StatusOr<TensorType> TensorTypeFromProto(const onnx::TypeProto& proto) {
  switch (proto.value_case()) {
    case onnx::TypeProto::VALUE_NOT_SET:
      return TensorType{};
    case onnx::TypeProto::kTensorType:
      return FromTensorProtoType(proto.tensor_type());
    case onnx::TypeProto::kSequenceType:
      return FromSequenceProtoType(proto.sequence_type());
    case onnx::TypeProto::kOptionalType: {
      const onnx::TypeProto& elem = proto.optional_type().elem_type();
      StatusOr<TensorType> inner = TensorType{};
      if (elem.value_case() == onnx::TypeProto::kTensorType) {
        inner = FromTensorProtoType(elem.tensor_type());
      } else if (elem.value_case() == onnx::TypeProto::kSequenceType) {
        inner = FromSequenceProtoType(elem.sequence_type());
      } else if (elem.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
        return UnimplementedError(std::string("is an optional of ") + TypeKindName(elem) +
                                  " values; qtune handles optional tensors and sequences only");
      }
      if (!inner.ok()) return inner.status();
      TensorType type = *inner;
      type.optional_of = type.kind;
      type.kind = ValueKind::kOptional;
      return type;
    }
    default:
      return UnimplementedError(std::string("has a ") + TypeKindName(proto) +
                                " type; qtune handles tensors, sequences and optionals");
  }
}

bool HasTypeInformation(const TensorType& type) {
  return type.dtype != DataType::kUndefined || type.shape.has_value() ||
         type.kind != ValueKind::kTensor;
}

namespace {

void TensorPartToProto(const TensorType& type, onnx::TypeProto::Tensor* tensor) {
  tensor->set_elem_type(static_cast<int32_t>(type.dtype));
  if (!type.shape.has_value()) return;
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (const Dim& d : type.shape->dims()) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (d.is_known()) {
      dim->set_dim_value(d.value);
    } else if (!d.symbol.empty()) {
      dim->set_dim_param(d.symbol);
    }
  }
}

void KindToProto(const TensorType& type, ValueKind kind, onnx::TypeProto* proto) {
  if (kind == ValueKind::kSequence) {
    TensorPartToProto(type,
                      proto->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type());
  } else {
    TensorPartToProto(type, proto->mutable_tensor_type());
  }
}

}  // namespace

void TensorTypeToProto(const TensorType& type, onnx::TypeProto* proto) {
  if (type.kind == ValueKind::kOptional) {
    KindToProto(type, type.optional_of, proto->mutable_optional_type()->mutable_elem_type());
    return;
  }
  if (type.kind == ValueKind::kSequence) {
    KindToProto(type, ValueKind::kSequence, proto);
    return;
  }
  if (!HasTypeInformation(type)) return;
  TensorPartToProto(type, proto->mutable_tensor_type());
}

StatusOr<Attribute> AttributeFromProto(const onnx::AttributeProto& p, TensorReader& reader,
                                       const std::string& what) {
  using A = onnx::AttributeProto;
  const std::string where = what + ", attribute '" + p.name() + "'";
  if (p.name().empty()) return InvalidArgumentError(what + " has an attribute without a name");
  if (!p.ref_attr_name().empty()) {
    return UnimplementedError(where + " refers to function attribute '" + p.ref_attr_name() +
                              "'; model-local functions are not supported");
  }
  A::AttributeType kind = p.has_type() ? p.type() : InferAttributeType(p);
  Attribute a;
  a.name = p.name();
  switch (kind) {
    case A::FLOAT:
      a.type = AttributeType::kFloat;
      a.f = p.f();
      break;
    case A::INT:
      a.type = AttributeType::kInt;
      a.i = p.i();
      break;
    case A::STRING:
      a.type = AttributeType::kString;
      a.s = p.s();
      break;
    case A::TENSOR: {
      a.type = AttributeType::kTensor;
      ASSIGN_OR_RETURN(a.t, reader.Read(p.t(), where));
      break;
    }
    case A::GRAPH:
      a.type = AttributeType::kGraph;
      a.graphs.push_back(p.g().SerializeAsString());
      break;
    case A::FLOATS:
      a.type = AttributeType::kFloats;
      a.floats.assign(p.floats().begin(), p.floats().end());
      break;
    case A::INTS:
      a.type = AttributeType::kInts;
      a.ints.assign(p.ints().begin(), p.ints().end());
      break;
    case A::STRINGS:
      a.type = AttributeType::kStrings;
      a.strings.assign(p.strings().begin(), p.strings().end());
      break;
    case A::TENSORS:
      a.type = AttributeType::kTensors;
      for (int i = 0; i < p.tensors_size(); ++i) {
        ASSIGN_OR_RETURN(Tensor t,
                         reader.Read(p.tensors(i), where + "[" + std::to_string(i) + "]"));
        a.tensors.push_back(std::move(t));
      }
      break;
    case A::GRAPHS:
      a.type = AttributeType::kGraphs;
      for (const onnx::GraphProto& g : p.graphs()) a.graphs.push_back(g.SerializeAsString());
      break;
    case A::SPARSE_TENSOR:
    case A::SPARSE_TENSORS:
      return UnimplementedError(where + " holds a sparse tensor, which qtune does not support");
    case A::TYPE_PROTO:
    case A::TYPE_PROTOS:
      return UnimplementedError(where + " holds a type, which qtune does not support");
    default:
      return InvalidArgumentError(where + " has no value or an unknown type");
  }
  return a;
}

Status AttributeToProto(const Attribute& a, onnx::AttributeProto* p) {
  using A = onnx::AttributeProto;
  p->set_name(a.name);
  switch (a.type) {
    case AttributeType::kFloat:
      p->set_type(A::FLOAT);
      p->set_f(a.f);
      break;
    case AttributeType::kInt:
      p->set_type(A::INT);
      p->set_i(a.i);
      break;
    case AttributeType::kString:
      p->set_type(A::STRING);
      p->set_s(a.s);
      break;
    case AttributeType::kTensor:
      p->set_type(A::TENSOR);
      if (!a.t.is_valid()) return InternalError("tensor attribute '" + a.name + "' has no tensor");
      TensorToProto(a.t, p->mutable_t());
      break;
    case AttributeType::kGraph:
      p->set_type(A::GRAPH);
      if (a.graphs.size() != 1 || !p->mutable_g()->ParseFromString(a.graphs[0])) {
        return InternalError("graph attribute '" + a.name + "' does not hold one GraphProto");
      }
      break;
    case AttributeType::kFloats:
      p->set_type(A::FLOATS);
      p->mutable_floats()->Add(a.floats.begin(), a.floats.end());
      break;
    case AttributeType::kInts:
      p->set_type(A::INTS);
      p->mutable_ints()->Add(a.ints.begin(), a.ints.end());
      break;
    case AttributeType::kStrings:
      p->set_type(A::STRINGS);
      for (const std::string& s : a.strings) p->add_strings(s);
      break;
    case AttributeType::kTensors:
      p->set_type(A::TENSORS);
      for (const Tensor& t : a.tensors) {
        if (!t.is_valid()) return InternalError("tensors attribute '" + a.name + "' has no tensor");
        TensorToProto(t, p->add_tensors());
      }
      break;
    case AttributeType::kGraphs:
      p->set_type(A::GRAPHS);
      for (const std::string& bytes : a.graphs) {
        if (!p->add_graphs()->ParseFromString(bytes)) {
          return InternalError("graphs attribute '" + a.name + "' holds a malformed GraphProto");
        }
      }
      break;
  }
  return Status::Ok();
}

namespace {

void AddUnique(const std::string& name, std::vector<std::string>& out,
               std::unordered_set<std::string>& seen) {
  if (seen.insert(name).second) out.push_back(name);
}

void CollectOuterScopeNames(const onnx::GraphProto& graph, std::vector<std::string>& out,
                            std::unordered_set<std::string>& seen) {
  std::unordered_set<std::string> defined;
  for (const auto& v : graph.input()) defined.insert(v.name());
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& s : graph.sparse_initializer()) defined.insert(s.values().name());
  for (const auto& n : graph.node()) {
    for (const std::string& o : n.output()) defined.insert(o);
  }
  for (const auto& n : graph.node()) {
    for (const std::string& i : n.input()) {
      if (!i.empty() && defined.count(i) == 0) AddUnique(i, out, seen);
    }
    for (const std::string& name : OuterScopeNames(n)) {
      if (defined.count(name) == 0) AddUnique(name, out, seen);
    }
  }
  // A subgraph output may be an outer value passed straight through.
  for (const auto& v : graph.output()) {
    if (!v.name().empty() && defined.count(v.name()) == 0) AddUnique(v.name(), out, seen);
  }
}

}  // namespace

std::vector<std::string> OuterScopeNames(const onnx::GraphProto& graph) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  CollectOuterScopeNames(graph, out, seen);
  return out;
}

std::vector<std::string> OuterScopeNames(const onnx::NodeProto& node) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.has_g()) CollectOuterScopeNames(a.g(), out, seen);
    for (const onnx::GraphProto& g : a.graphs()) CollectOuterScopeNames(g, out, seen);
  }
  return out;
}

}  // namespace qtune::ir
