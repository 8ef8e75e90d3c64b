// The graph IR: Values (tensors flowing between nodes), Nodes (operators) and the Graph
// that owns both. Values are in SSA form: every value has one name, at most one producer
// and a use-list. The use-lists are kept correct by the Graph's mutation verbs; there is
// no other way to change connections.
//
// Ownership: the Graph owns every Node and Value; Node* and Value* stay valid until the
// Graph removes them (RemoveNode, RemoveValue) or is destroyed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/attribute.h"

namespace qtune::ir {

class Node;
class Graph;

// What a value holds at run time (core/run_value.h): a tensor, a sequence of tensors, or
// an optional (of a tensor or of a sequence, per `optional_of`).
enum class ValueKind : uint8_t { kTensor, kSequence, kOptional };

// A value's type. For a sequence (or an optional of one), dtype and shape describe its
// elements. Most of qtune handles kTensor only; the other kinds run on the engine's
// dynamic steps (runtime/plan/staged_runner.h).
struct TensorType {
  DataType dtype = DataType::kUndefined;
  std::optional<Shape> shape;  // nullopt when even the rank is unknown
  ValueKind kind = ValueKind::kTensor;
  ValueKind optional_of = ValueKind::kTensor;  // for kind == kOptional: kTensor or kSequence
  bool is_tensor() const { return kind == ValueKind::kTensor; }
};

// One consumer of a value: `node` reads it as input number `input_index`, or, when
// input_index == kImplicitInput, through a subgraph attribute.
struct Use {
  static constexpr int kImplicitInput = -1;
  Node* node = nullptr;
  int input_index = 0;
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  void set_type(TensorType type) { type_ = std::move(type); }
  DataType dtype() const { return type_.dtype; }

  // Null for graph inputs and initializers.
  Node* producer() const { return producer_; }
  int producer_output_index() const { return producer_output_index_; }
  const std::vector<Use>& uses() const { return uses_; }

  bool is_graph_input() const { return is_graph_input_; }
  bool is_initializer() const { return initializer_.is_valid(); }
  bool is_graph_output() const { return is_graph_output_; }
  // REQUIRES: is_initializer().
  const Tensor& initializer() const { return initializer_; }

 private:
  friend class Graph;
  Value() = default;

  std::string name_;
  TensorType type_;
  Node* producer_ = nullptr;
  int producer_output_index_ = -1;
  std::vector<Use> uses_;
  bool is_graph_input_ = false;
  bool is_graph_output_ = false;
  Tensor initializer_;
};

// What AddNode needs. Omitted optional inputs are nullptr; omitted optional outputs
// have an empty name (their slot in Node::outputs() is nullptr).
struct NodeSpec {
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain (also written "ai.onnx")
  std::string name;
  std::vector<Value*> inputs;
  std::vector<std::string> output_names;
  std::vector<Attribute> attributes;
  std::vector<Value*> implicit_inputs;  // outer-scope values read by subgraph attributes
  std::string doc_string;
};

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& op_type() const { return op_type_; }
  const std::string& domain() const { return domain_; }
  const std::string& name() const { return name_; }
  const std::string& doc_string() const { return doc_string_; }

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  // Null for an omitted optional input.
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<Value*>& implicit_inputs() const { return implicit_inputs_; }

  const std::vector<Attribute>& attributes() const { return attributes_; }
  const Attribute* FindAttribute(std::string_view name) const;
  bool HasAttribute(std::string_view name) const { return FindAttribute(name) != nullptr; }
  // Typed getters return `fallback` when the attribute is absent or of another type.
  int64_t GetInt(std::string_view name, int64_t fallback) const;
  float GetFloat(std::string_view name, float fallback) const;
  std::string GetString(std::string_view name, std::string fallback) const;
  std::vector<int64_t> GetInts(std::string_view name, std::vector<int64_t> fallback) const;
  std::vector<float> GetFloats(std::string_view name, std::vector<float> fallback) const;
  // Adds or replaces the attribute of the same name.
  void SetAttribute(Attribute attribute);
  void RemoveAttribute(std::string_view name);

  // "Conv 'conv1'" — for error messages.
  std::string DebugName() const;

 private:
  friend class Graph;
  Node() = default;

  std::string op_type_;
  std::string domain_;
  std::string name_;
  std::string doc_string_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Value*> implicit_inputs_;
  std::vector<Attribute> attributes_;
};

// Model-level facts carried from ONNX's ModelProto.
struct ModelInfo {
  int64_t ir_version = 8;
  std::map<std::string, int64_t> opset_imports;  // domain ("" = ai.onnx) -> version
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::string graph_name;
  std::vector<std::pair<std::string, std::string>> metadata_props;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  ModelInfo& info() { return info_; }
  const ModelInfo& info() const { return info_; }
  // Version of the default ONNX domain ("" or "ai.onnx"); 0 if not imported.
  int64_t onnx_opset() const;

  // --- Building. Each fails with AlreadyExists if a value name is taken. ---
  StatusOr<Value*> AddInput(std::string name, TensorType type);
  StatusOr<Value*> AddInitializer(std::string name, Tensor tensor);
  // Marks `value` as the next graph output. Fails if it already is one.
  Status AddOutput(Value* value);
  // REQUIRES: every input in spec belongs to this graph (or is nullptr).
  StatusOr<Node*> AddNode(NodeSpec spec);

  // --- Mutation verbs; each keeps use-lists and output lists correct. ---
  // Makes node->input(index) be `value` (may be nullptr to omit an optional input).
  void SetNodeInput(Node* node, size_t index, Value* value);
  // Replaces the node's implicit inputs (outer-scope values its subgraphs read).
  // REQUIRES: every value belongs to this graph and is non-null.
  void SetImplicitInputs(Node* node, std::vector<Value*> values);
  // Every node input (and implicit input) reading `from` reads `to` instead; if `from`
  // is a graph output, that output slot now refers to `to`. REQUIRES: from != to.
  void ReplaceAllUsesWith(Value* from, Value* to);
  // Removes a node and its outputs. FailedPrecondition if an output still has uses or
  // is a graph output.
  Status RemoveNode(Node* node);
  // Removes a graph input or initializer that has no uses and is not a graph output.
  Status RemoveValue(Value* value);
  // Replaces an initializer's data (sizes and dtype may change; the value type follows).
  Status SetInitializer(Value* value, Tensor tensor);
  // Renames a value. AlreadyExists if `new_name` is taken.
  Status RenameValue(Value* value, std::string new_name);
  // A value name not yet used in the graph: `base`, else `base_1`, `base_2`, ...
  std::string UniqueValueName(std::string_view base) const;
  // A node name not yet used in the graph, same scheme.
  std::string UniqueNodeName(std::string_view base) const;

  // --- Queries. ---
  Value* FindValue(std::string_view name) const;
  Node* FindNode(std::string_view name) const;  // first node with that name
  // Nodes in insertion order (the order they were loaded or added).
  std::vector<Node*> nodes() const;
  size_t num_nodes() const { return nodes_.size(); }
  // Graph inputs in declaration order; initializers are not among them.
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  // Initializers in the order they were added.
  const std::vector<Value*>& initializers() const { return initializers_; }
  // Producers before consumers; ties keep insertion order. InvalidArgument naming a node
  // on the cycle if the graph has one.
  StatusOr<std::vector<Node*>> TopologicalOrder() const;
  // Reorders the node list into TopologicalOrder().
  Status SortTopologically();

  // Deep copy, nodes in topological order. Initializer tensors are shared (the Graph never
  // writes into them; SetInitializer replaces the tensor).
  std::unique_ptr<Graph> Clone() const;
  // How many times Clone() ran in this process (all graphs, all threads): for tests that
  // pin how often a flow copies a model (Session::Create, tune::LoadTunedSession).
  static int64_t CloneCount();

 private:
  Value* NewValue(std::string name);
  void RemoveUse(Value* value, Use use);

  ModelInfo info_;
  std::unordered_map<std::string, std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Value*> initializers_;
};

}  // namespace qtune::ir
