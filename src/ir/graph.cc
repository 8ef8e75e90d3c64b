#include "ir/graph.h"

#include <algorithm>
#include <atomic>
#include <queue>
#include <unordered_set>

#include "core/check.h"

namespace qtune::ir {

// ----------------------------------------------------------------------------- Node

const Attribute* Node::FindAttribute(std::string_view name) const {
  for (const Attribute& a : attributes_) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

int64_t Node::GetInt(std::string_view name, int64_t fallback) const {
  const Attribute* a = FindAttribute(name);
  return a != nullptr && a->type == AttributeType::kInt ? a->i : fallback;
}

float Node::GetFloat(std::string_view name, float fallback) const {
  const Attribute* a = FindAttribute(name);
  return a != nullptr && a->type == AttributeType::kFloat ? a->f : fallback;
}

std::string Node::GetString(std::string_view name, std::string fallback) const {
  const Attribute* a = FindAttribute(name);
  return a != nullptr && a->type == AttributeType::kString ? a->s : fallback;
}

std::vector<int64_t> Node::GetInts(std::string_view name, std::vector<int64_t> fallback) const {
  const Attribute* a = FindAttribute(name);
  return a != nullptr && a->type == AttributeType::kInts ? a->ints : fallback;
}

std::vector<float> Node::GetFloats(std::string_view name, std::vector<float> fallback) const {
  const Attribute* a = FindAttribute(name);
  return a != nullptr && a->type == AttributeType::kFloats ? a->floats : fallback;
}

void Node::SetAttribute(Attribute attribute) {
  for (Attribute& a : attributes_) {
    if (a.name == attribute.name) {
      a = std::move(attribute);
      return;
    }
  }
  attributes_.push_back(std::move(attribute));
}

void Node::RemoveAttribute(std::string_view name) {
  std::erase_if(attributes_, [&](const Attribute& a) { return a.name == name; });
}

std::string Node::DebugName() const {
  return op_type_ + " '" + (name_.empty() ? "<unnamed>" : name_) + "'";
}

// ---------------------------------------------------------------------------- Graph

int64_t Graph::onnx_opset() const {
  for (const char* domain : {"", "ai.onnx"}) {
    auto it = info_.opset_imports.find(domain);
    if (it != info_.opset_imports.end()) return it->second;
  }
  return 0;
}

Value* Graph::NewValue(std::string name) {
  auto value = std::unique_ptr<Value>(new Value());
  value->name_ = name;
  Value* raw = value.get();
  values_.emplace(std::move(name), std::move(value));
  return raw;
}

StatusOr<Value*> Graph::AddInput(std::string name, TensorType type) {
  if (values_.count(name) != 0)
    return AlreadyExistsError("value name '" + name + "' is used twice");
  Value* v = NewValue(std::move(name));
  v->type_ = std::move(type);
  v->is_graph_input_ = true;
  inputs_.push_back(v);
  return v;
}

StatusOr<Value*> Graph::AddInitializer(std::string name, Tensor tensor) {
  if (values_.count(name) != 0)
    return AlreadyExistsError("value name '" + name + "' is used twice");
  if (!tensor.is_valid()) return InvalidArgumentError("initializer '" + name + "' has no data");
  Value* v = NewValue(std::move(name));
  v->type_.dtype = tensor.dtype();
  v->type_.shape = Shape::FromSizes(tensor.sizes());
  v->initializer_ = std::move(tensor);
  initializers_.push_back(v);
  return v;
}

Status Graph::AddOutput(Value* value) {
  QTUNE_CHECK(value != nullptr);
  if (value->is_graph_output_) {
    return AlreadyExistsError("'" + value->name() + "' is listed twice as a graph output");
  }
  value->is_graph_output_ = true;
  outputs_.push_back(value);
  return Status::Ok();
}

StatusOr<Node*> Graph::AddNode(NodeSpec spec) {
  std::unordered_set<std::string> seen;
  for (const std::string& out : spec.output_names) {
    if (out.empty()) continue;
    if (values_.count(out) != 0 || !seen.insert(out).second) {
      std::string who = spec.op_type + " '" + spec.name + "'";
      return AlreadyExistsError("output '" + out + "' of " + who +
                                " is already produced elsewhere in the graph");
    }
  }
  auto node = std::unique_ptr<Node>(new Node());
  Node* n = node.get();
  n->op_type_ = std::move(spec.op_type);
  n->domain_ = std::move(spec.domain);
  n->name_ = std::move(spec.name);
  n->doc_string_ = std::move(spec.doc_string);
  n->attributes_ = std::move(spec.attributes);
  n->inputs_ = std::move(spec.inputs);
  for (size_t i = 0; i < n->inputs_.size(); ++i) {
    if (n->inputs_[i] != nullptr) n->inputs_[i]->uses_.push_back({n, static_cast<int>(i)});
  }
  n->implicit_inputs_ = std::move(spec.implicit_inputs);
  for (Value* v : n->implicit_inputs_) {
    QTUNE_CHECK(v != nullptr);
    v->uses_.push_back({n, Use::kImplicitInput});
  }
  for (size_t i = 0; i < spec.output_names.size(); ++i) {
    if (spec.output_names[i].empty()) {
      n->outputs_.push_back(nullptr);
      continue;
    }
    Value* v = NewValue(std::move(spec.output_names[i]));
    v->producer_ = n;
    v->producer_output_index_ = static_cast<int>(i);
    n->outputs_.push_back(v);
  }
  nodes_.push_back(std::move(node));
  return n;
}

void Graph::RemoveUse(Value* value, Use use) {
  auto it = std::find(value->uses_.begin(), value->uses_.end(), use);
  QTUNE_CHECK(it != value->uses_.end());
  value->uses_.erase(it);
}

void Graph::SetNodeInput(Node* node, size_t index, Value* value) {
  QTUNE_CHECK(node != nullptr);
  if (index >= node->inputs_.size()) node->inputs_.resize(index + 1, nullptr);
  Value* old = node->inputs_[index];
  if (old == value) return;
  if (old != nullptr) RemoveUse(old, {node, static_cast<int>(index)});
  node->inputs_[index] = value;
  if (value != nullptr) value->uses_.push_back({node, static_cast<int>(index)});
}

void Graph::SetImplicitInputs(Node* node, std::vector<Value*> values) {
  QTUNE_CHECK(node != nullptr);
  for (Value* v : node->implicit_inputs_) RemoveUse(v, {node, Use::kImplicitInput});
  node->implicit_inputs_ = std::move(values);
  for (Value* v : node->implicit_inputs_) {
    QTUNE_CHECK(v != nullptr);
    v->uses_.push_back({node, Use::kImplicitInput});
  }
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  QTUNE_CHECK(from != nullptr && to != nullptr && from != to);
  std::vector<Use> uses = from->uses_;
  for (const Use& use : uses) {
    if (use.input_index == Use::kImplicitInput) {
      for (Value*& v : use.node->implicit_inputs_) {
        if (v == from) v = to;
      }
      to->uses_.push_back(use);
    } else {
      use.node->inputs_[use.input_index] = to;
      to->uses_.push_back(use);
    }
  }
  from->uses_.clear();
  if (from->is_graph_output_) {
    for (Value*& out : outputs_) {
      if (out == from) out = to;
    }
    from->is_graph_output_ = false;
    to->is_graph_output_ = true;
  }
}

Status Graph::RemoveNode(Node* node) {
  QTUNE_CHECK(node != nullptr);
  for (Value* out : node->outputs_) {
    if (out == nullptr) continue;
    if (!out->uses_.empty() || out->is_graph_output_) {
      return FailedPreconditionError("cannot remove " + node->DebugName() + ": its output '" +
                                     out->name() + "' is still used");
    }
  }
  for (size_t i = 0; i < node->inputs_.size(); ++i) {
    if (node->inputs_[i] != nullptr) RemoveUse(node->inputs_[i], {node, static_cast<int>(i)});
  }
  for (Value* v : node->implicit_inputs_) RemoveUse(v, {node, Use::kImplicitInput});
  for (Value* out : node->outputs_) {
    if (out != nullptr) values_.erase(out->name());
  }
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const std::unique_ptr<Node>& n) { return n.get() == node; });
  QTUNE_CHECK(it != nodes_.end());
  nodes_.erase(it);
  return Status::Ok();
}

Status Graph::RemoveValue(Value* value) {
  QTUNE_CHECK(value != nullptr);
  if (value->producer_ != nullptr) {
    return FailedPreconditionError("'" + value->name() + "' is produced by " +
                                   value->producer_->DebugName() + "; remove the node instead");
  }
  if (!value->uses_.empty() || value->is_graph_output_) {
    return FailedPreconditionError("cannot remove '" + value->name() + "': it is still used");
  }
  std::erase(inputs_, value);
  std::erase(initializers_, value);
  values_.erase(value->name());
  return Status::Ok();
}

Status Graph::SetInitializer(Value* value, Tensor tensor) {
  QTUNE_CHECK(value != nullptr);
  if (!value->is_initializer()) {
    return FailedPreconditionError("'" + value->name() + "' is not an initializer");
  }
  if (!tensor.is_valid())
    return InvalidArgumentError("initializer '" + value->name() + "' has no data");
  value->type_.dtype = tensor.dtype();
  value->type_.shape = Shape::FromSizes(tensor.sizes());
  value->initializer_ = std::move(tensor);
  return Status::Ok();
}

Status Graph::RenameValue(Value* value, std::string new_name) {
  QTUNE_CHECK(value != nullptr);
  if (new_name == value->name_) return Status::Ok();
  if (values_.count(new_name) != 0) {
    return AlreadyExistsError("cannot rename '" + value->name_ + "' to '" + new_name +
                              "': the name is taken");
  }
  auto node = values_.extract(value->name_);
  node.key() = new_name;
  value->name_ = std::move(new_name);
  values_.insert(std::move(node));
  return Status::Ok();
}

std::string Graph::UniqueValueName(std::string_view base) const {
  std::string name(base);
  for (int i = 1; values_.count(name) != 0; ++i) name = std::string(base) + "_" + std::to_string(i);
  return name;
}

std::string Graph::UniqueNodeName(std::string_view base) const {
  std::unordered_set<std::string> taken;
  for (const auto& n : nodes_) taken.insert(n->name_);
  std::string name(base);
  for (int i = 1; taken.count(name) != 0; ++i) name = std::string(base) + "_" + std::to_string(i);
  return name;
}

Value* Graph::FindValue(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? nullptr : it->second.get();
}

Node* Graph::FindNode(std::string_view name) const {
  for (const auto& n : nodes_) {
    if (n->name_ == name) return n.get();
  }
  return nullptr;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

StatusOr<std::vector<Node*>> Graph::TopologicalOrder() const {
  // Kahn's algorithm over producer->consumer edges, taking ready nodes in insertion order.
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes_.size(); ++i) position[nodes_[i].get()] = i;
  std::vector<int> pending(nodes_.size(), 0);
  auto for_each_input = [](const Node* n, auto&& fn) {
    for (Value* v : n->inputs_) {
      if (v != nullptr) fn(v);
    }
    for (Value* v : n->implicit_inputs_) fn(v);
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for_each_input(nodes_[i].get(), [&](Value* v) {
      if (v->producer_ != nullptr) ++pending[i];
    });
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  while (!ready.empty()) {
    Node* n = nodes_[ready.top()].get();
    ready.pop();
    order.push_back(n);
    for (Value* out : n->outputs_) {
      if (out == nullptr) continue;
      for (const Use& use : out->uses_) {
        size_t j = position[use.node];
        if (--pending[j] == 0) ready.push(j);
      }
    }
  }
  if (order.size() != nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (pending[i] > 0) {
        return InvalidArgumentError("the graph has a cycle through " + nodes_[i]->DebugName());
      }
    }
  }
  return order;
}

Status Graph::SortTopologically() {
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder());
  std::unordered_map<Node*, size_t> rank;
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = i;
  std::sort(nodes_.begin(), nodes_.end(),
            [&](const auto& a, const auto& b) { return rank[a.get()] < rank[b.get()]; });
  return Status::Ok();
}

namespace {
std::atomic<int64_t> g_clone_count{0};
}  // namespace

int64_t Graph::CloneCount() { return g_clone_count.load(std::memory_order_relaxed); }

std::unique_ptr<Graph> Graph::Clone() const {
  g_clone_count.fetch_add(1, std::memory_order_relaxed);
  auto copy = std::make_unique<Graph>();
  copy->info_ = info_;
  std::unordered_map<const Value*, Value*> map;
  auto mapped = [&](Value* v) { return v == nullptr ? nullptr : map.at(v); };
  for (Value* in : inputs_) map[in] = *copy->AddInput(in->name_, in->type_);
  for (Value* init : initializers_) {
    Value* v = *copy->AddInitializer(init->name_, init->initializer_);
    v->type_ = init->type_;
    v->is_graph_input_ = init->is_graph_input_;
    map[init] = v;
  }
  auto order = TopologicalOrder();
  std::vector<Node*> sequence = order.ok() ? *order : nodes();
  for (Node* n : sequence) {
    // In a cyclic graph (which Verify rejects) back-edge inputs are dropped.
    NodeSpec spec{n->op_type_, n->domain_, n->name_, {}, {}, n->attributes_, {}, n->doc_string_};
    for (Value* v : n->inputs_)
      spec.inputs.push_back(v == nullptr || map.count(v) ? mapped(v) : nullptr);
    for (Value* v : n->implicit_inputs_) {
      if (map.count(v)) spec.implicit_inputs.push_back(map.at(v));
    }
    for (Value* v : n->outputs_) spec.output_names.push_back(v == nullptr ? "" : v->name_);
    Node* copy_node = *copy->AddNode(std::move(spec));
    for (size_t i = 0; i < n->outputs_.size(); ++i) {
      if (n->outputs_[i] == nullptr) continue;
      copy_node->outputs_[i]->type_ = n->outputs_[i]->type_;
      map[n->outputs_[i]] = copy_node->outputs_[i];
    }
  }
  for (Value* out : outputs_) {
    if (map.count(out)) copy->AddOutput(map.at(out)).IgnoreError();
  }
  return copy;
}

}  // namespace qtune::ir
