#include "ir/builder.h"

#include <cstdio>

#include "core/check.h"
#include "ir/verify.h"

namespace qtune::ir {
namespace {

template <typename T>
T CheckOk(StatusOr<T> result, const char* what) {
  if (!result.ok()) {
    std::fprintf(stderr, "GraphBuilder::%s: %s\n", what, result.status().ToString().c_str());
  }
  QTUNE_CHECK(result.ok());
  return std::move(result).value();
}

void CheckOk(const Status& status, const char* what) {
  if (!status.ok()) std::fprintf(stderr, "GraphBuilder::%s: %s\n", what, status.ToString().c_str());
  QTUNE_CHECK(status.ok());
}

}  // namespace

int64_t IrVersionForOpset(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  if (opset <= 24) return 11;
  return 12;
}

GraphBuilder::GraphBuilder(int64_t opset) : graph_(std::make_unique<Graph>()) {
  graph_->info().opset_imports[""] = opset;
  graph_->info().ir_version = IrVersionForOpset(opset);
  graph_->info().producer_name = "qtune";
  graph_->info().graph_name = "qtune_graph";
}

Value* GraphBuilder::Input(std::string name, DataType dtype, const std::vector<int64_t>& sizes) {
  return Input(std::move(name), dtype, Shape::FromSizes(sizes));
}

Value* GraphBuilder::Input(std::string name, DataType dtype, Shape shape) {
  return CheckOk(graph_->AddInput(std::move(name), TensorType{dtype, std::move(shape)}), "Input");
}

Value* GraphBuilder::Initializer(std::string name, Tensor tensor) {
  return CheckOk(graph_->AddInitializer(std::move(name), std::move(tensor)), "Initializer");
}

Value* GraphBuilder::Constant(Tensor tensor, const OpOptions& options) {
  TensorType type{tensor.dtype(), Shape::FromSizes(tensor.sizes())};
  Value* out = Op("Constant", {}, {Attribute::TensorValue("value", std::move(tensor))}, options);
  out->set_type(std::move(type));
  return out;
}

Value* GraphBuilder::Op(const std::string& op_type, std::vector<Value*> inputs,
                        std::vector<Attribute> attributes, const OpOptions& options) {
  return MultiOp(op_type, std::move(inputs), 1, std::move(attributes), options)[0];
}

std::vector<Value*> GraphBuilder::MultiOp(const std::string& op_type, std::vector<Value*> inputs,
                                          size_t num_outputs, std::vector<Attribute> attributes,
                                          const OpOptions& options) {
  QTUNE_CHECK(options.output_names.empty() || options.output_names.size() == num_outputs);
  NodeSpec spec;
  spec.op_type = op_type;
  spec.domain = options.domain;
  if (options.name.empty()) {
    do {
      spec.name = op_type + "_" + std::to_string(node_counter_++);
    } while (node_names_.count(spec.name) > 0);
  } else {
    spec.name = options.name;
  }
  node_names_.insert(spec.name);
  spec.inputs = std::move(inputs);
  spec.attributes = std::move(attributes);
  for (size_t i = 0; i < num_outputs; ++i) {
    if (!options.output_names.empty()) {
      spec.output_names.push_back(options.output_names[i]);
    } else {
      std::string base = spec.name + "_out" + (num_outputs == 1 ? "" : std::to_string(i));
      spec.output_names.push_back(graph_->UniqueValueName(base));
    }
  }
  last_node_ = CheckOk(graph_->AddNode(std::move(spec)), "Op");
  return last_node_->outputs();
}

void GraphBuilder::SetType(Value* value, DataType dtype, Shape shape) {
  QTUNE_CHECK(value != nullptr);
  value->set_type(TensorType{dtype, std::move(shape)});
}

void GraphBuilder::Output(Value* value) { CheckOk(graph_->AddOutput(value), "Output"); }

void GraphBuilder::ImportOpset(const std::string& domain, int64_t version) {
  graph_->info().opset_imports[domain] = version;
}

std::unique_ptr<Graph> GraphBuilder::Build() {
  QTUNE_CHECK(graph_ != nullptr);
  CheckOk(graph_->SortTopologically(), "Build");
  CheckOk(Verify(*graph_), "Build");
  return std::move(graph_);
}

}  // namespace qtune::ir
