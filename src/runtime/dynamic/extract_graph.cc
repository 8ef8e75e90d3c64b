#include "runtime/dynamic/extract_graph.h"

#include <unordered_map>

namespace qtune::runtime {
namespace {

class Extractor {
 public:
  Extractor(const ir::Graph& source, const ExtractOptions& options)
      : options_(options), graph_(std::make_unique<ir::Graph>()) {
    graph_->info() = source.info();
  }

  // The new graph's value for `value` of the source: made an input or initializer on
  // first use when no extracted node produces it.
  StatusOr<ir::Value*> Map(const ir::Value* value) {
    if (value == nullptr) return nullptr;
    auto it = mapped_.find(value);
    if (it != mapped_.end()) return it->second;
    StatusOr<ir::Value*> added = nullptr;
    auto constant = options_.constants.find(value->name());
    if (constant != options_.constants.end()) {
      added = graph_->AddInitializer(value->name(), constant->second);
    } else if (value->is_initializer()) {
      added = graph_->AddInitializer(value->name(), value->initializer());
    } else {
      auto type = options_.input_types.find(value->name());
      added = graph_->AddInput(value->name(),
                               type != options_.input_types.end() ? type->second : value->type());
    }
    if (!added.ok()) return added.status();
    mapped_[value] = *added;
    return *added;
  }

  Status AddNode(const ir::Node& node) {
    ir::NodeSpec spec{node.op_type(),   node.domain(), node.name(), {}, {}, node.attributes(), {},
                      node.doc_string()};
    for (const ir::Value* in : node.inputs()) {
      ASSIGN_OR_RETURN(ir::Value * v, Map(in));
      spec.inputs.push_back(v);
    }
    for (const ir::Value* in : node.implicit_inputs()) {
      ASSIGN_OR_RETURN(ir::Value * v, Map(in));
      spec.implicit_inputs.push_back(v);
    }
    for (const ir::Value* out : node.outputs()) {
      spec.output_names.push_back(out == nullptr ? std::string() : out->name());
    }
    ASSIGN_OR_RETURN(ir::Node * added, graph_->AddNode(std::move(spec)));
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      if (node.output(i) == nullptr) continue;
      added->output(i)->set_type(node.output(i)->type());
      mapped_[node.output(i)] = added->output(i);
    }
    return Status::Ok();
  }

  Status AddOutputs() {
    for (const std::string& name : options_.outputs) {
      ir::Value* v = graph_->FindValue(name);
      if (v == nullptr || v->producer() == nullptr) {
        return InternalError("extracted graph: output '" + name + "' is not produced by its nodes");
      }
      RETURN_IF_ERROR(graph_->AddOutput(v));
    }
    return Status::Ok();
  }

  std::unique_ptr<ir::Graph> Release() { return std::move(graph_); }

 private:
  const ExtractOptions& options_;
  std::unique_ptr<ir::Graph> graph_;
  std::unordered_map<const ir::Value*, ir::Value*> mapped_;
};

}  // namespace

StatusOr<std::unique_ptr<ir::Graph>> ExtractGraph(const ir::Graph& source,
                                                  std::span<const ir::Node* const> nodes,
                                                  const ExtractOptions& options) {
  Extractor extractor(source, options);
  for (const ir::Node* node : nodes) RETURN_IF_ERROR(extractor.AddNode(*node));
  RETURN_IF_ERROR(extractor.AddOutputs());
  return extractor.Release();
}

}  // namespace qtune::runtime
