#include "ir/subgraph.h"

#include "core/check.h"
#include "ir/onnx_convert.h"
#include "ir/onnx_io.h"

namespace qtune::ir {
namespace {

StatusOr<onnx::GraphProto> ParseGraphProto(const std::string& bytes, const std::string& what) {
  onnx::GraphProto proto;
  if (!proto.ParseFromString(bytes)) {
    return InvalidArgumentError(what + " is not a valid onnx.GraphProto");
  }
  return proto;
}

}  // namespace

StatusOr<std::unique_ptr<Graph>> ParseSubgraph(const std::string& bytes,
                                               const SubgraphContext& context) {
  QTUNE_CHECK(context.model != nullptr);
  ASSIGN_OR_RETURN(onnx::GraphProto proto, ParseGraphProto(bytes, context.what));
  const size_t num_formal = context.keep_declared_inputs ? 0 : context.formal_input_types.size();
  if (!context.keep_declared_inputs && static_cast<size_t>(proto.input_size()) != num_formal) {
    return InvalidArgumentError(context.what + " has " + std::to_string(proto.input_size()) +
                                " inputs, but the op passes it " + std::to_string(num_formal));
  }
  for (size_t i = 0; i < num_formal; ++i) {
    onnx::ValueInfoProto* input = proto.mutable_input(static_cast<int>(i));
    DataType dtype = context.formal_input_types[i];
    if (dtype == DataType::kUndefined) {
      if (input->type().has_tensor_type())
        input->mutable_type()->mutable_tensor_type()->clear_shape();
      continue;
    }
    input->clear_type();
    input->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(dtype));
  }
  for (const std::string& name : OuterScopeNames(proto)) {
    auto it = context.outer.find(name);
    if (it == context.outer.end()) {
      return InvalidArgumentError(context.what + " reads '" + name +
                                  "', which is not one of the values its node may read from "
                                  "the enclosing graph (its implicit inputs)");
    }
    if (it->second.constant.is_valid()) {
      onnx::TensorProto* t = proto.add_initializer();
      TensorToProto(it->second.constant, t);
      t->set_name(name);
      continue;
    }
    onnx::ValueInfoProto* input = proto.add_input();
    input->set_name(name);
    input->mutable_type()->mutable_tensor_type()->set_elem_type(
        static_cast<int32_t>(it->second.dtype));
  }
  onnx::ModelProto model;
  model.set_ir_version(context.model->ir_version);
  for (const auto& [domain, version] : context.model->opset_imports) {
    onnx::OperatorSetIdProto* opset = model.add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  *model.mutable_graph() = std::move(proto);
  std::string wrapped;
  if (!model.SerializeToString(&wrapped)) {
    return InternalError(context.what + ": cannot serialize the body for parsing");
  }
  LoadOptions options;
  options.external_data_dir.clear();
  return ParseModel(wrapped, context.what, options);
}

StatusOr<std::vector<std::string>> SubgraphOuterNames(const std::string& bytes) {
  ASSIGN_OR_RETURN(onnx::GraphProto proto, ParseGraphProto(bytes, "a subgraph attribute"));
  return OuterScopeNames(proto);
}

StatusOr<Attribute> SubgraphAttribute(std::string name, const Graph& body,
                                      size_t num_outer_inputs) {
  if (num_outer_inputs > body.inputs().size()) {
    return InvalidArgumentError("subgraph '" + name + "' has " +
                                std::to_string(body.inputs().size()) + " inputs, fewer than the " +
                                std::to_string(num_outer_inputs) + " outer-scope ones");
  }
  ASSIGN_OR_RETURN(std::string serialized, SerializeModel(body));
  onnx::ModelProto model;
  if (!model.ParseFromString(serialized)) {
    return InternalError("subgraph '" + name + "': cannot re-read the serialized body");
  }
  onnx::GraphProto* graph = model.mutable_graph();
  for (size_t i = 0; i < num_outer_inputs; ++i) graph->mutable_input()->RemoveLast();
  if (graph->name().empty()) graph->set_name(name);
  Attribute attribute;
  attribute.name = std::move(name);
  attribute.type = AttributeType::kGraph;
  attribute.graphs.push_back(graph->SerializeAsString());
  return attribute;
}

}  // namespace qtune::ir
