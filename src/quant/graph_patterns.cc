#include "quant/graph_patterns.h"

#include <string>
#include <vector>

namespace qtune::quant {
namespace {

bool IsOneOf(const std::string& op, std::initializer_list<const char*> ops) {
  for (const char* o : ops) {
    if (op == o) return true;
  }
  return false;
}

bool IsDefaultDomain(const ir::Node& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

// The single node reading `value`, or nullptr.
const ir::Node* SoleConsumer(const ir::Value* value) {
  if (value == nullptr || value->uses().size() != 1 || value->is_graph_output()) return nullptr;
  return value->uses()[0].node;
}

// For Mul(x, f(x)) with f Sigmoid or HardSigmoid: x; else nullptr.
const ir::Value* XTimesFOfX(const ir::Node& mul) {
  if (mul.op_type() != "Mul" || mul.num_inputs() != 2) return nullptr;
  for (int i = 0; i < 2; ++i) {
    const ir::Value* x = mul.input(i);
    const ir::Value* fx = mul.input(1 - i);
    const ir::Node* f = fx == nullptr ? nullptr : fx->producer();
    if (f != nullptr && IsOneOf(f->op_type(), {"Sigmoid", "HardSigmoid"}) && f->input(0) == x) {
      return x;
    }
  }
  return nullptr;
}

}  // namespace

bool IsConstantValue(const ir::Value* value) {
  if (value == nullptr) return false;
  if (value->is_initializer()) return true;
  const ir::Node* producer = value->producer();
  return producer != nullptr && producer->op_type() == "Constant";
}

bool IsLinearWithConstantWeight(const ir::Node& node) {
  if (!IsDefaultDomain(node)) return false;
  if (!IsOneOf(node.op_type(), {"Conv", "ConvTranspose", "Gemm", "MatMul"})) return false;
  return node.num_inputs() >= 2 && IsConstantValue(node.input(1)) && node.input(0) != nullptr &&
         !IsConstantValue(node.input(0));
}

ir::Value* SoleActivationInput(const ir::Node& node) {
  ir::Value* found = nullptr;
  for (ir::Value* input : node.inputs()) {
    if (input == nullptr || IsConstantValue(input)) continue;
    if (found != nullptr && found != input) return nullptr;
    found = input;
  }
  return found;
}

std::optional<const ir::Node*> LinearProducerThroughEpilogue(const ir::Value* value,
                                                             int max_steps) {
  for (int step = 0; step <= max_steps && value != nullptr; ++step) {
    const ir::Node* node = value->producer();
    if (node == nullptr || !IsDefaultDomain(*node)) return std::nullopt;
    if (IsLinearWithConstantWeight(*node)) return node;
    const std::string& op = node->op_type();
    if (IsOneOf(op, {"BatchNormalization", "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid",
                     "HardSwish", "Tanh", "Elu", "Selu", "PRelu", "Identity", "Dropout", "Add",
                     "Sub", "Mul", "Div"})) {
      ir::Value* input = SoleActivationInput(*node);
      if (input != nullptr) {
        value = input;
        continue;
      }
      // x * f(x) (SiLU, HardSwish written out): continue from x.
      if (const ir::Value* x = XTimesFOfX(*node)) {
        value = x;
        continue;
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// From a Sub(x, ReduceMean(x)), the rest of the LayerNorm chain: every node reachable
// forward through the normalisation ops, stopping after the final Div (plus an affine
// Mul/Add by constants).
void CollectLayerNorm(const ir::Node* sub, std::unordered_set<const ir::Node*>& out) {
  // (node, number of affine steps after the Div; -1 before it)
  std::vector<std::pair<const ir::Node*, int>> stack = {{sub, -1}};
  while (!stack.empty() && out.size() < 4096) {
    auto [node, after_div] = stack.back();
    stack.pop_back();
    if (!out.insert(node).second) continue;
    // The normalising Div (or Mul by a Reciprocal): what follows is the affine part.
    if (after_div < 0 && node != sub &&
        (node->op_type() == "Div" ||
         (node->op_type() == "Mul" && SoleActivationInput(*node) == nullptr))) {
      after_div = 0;
    }
    for (const ir::Value* output : node->outputs()) {
      if (output == nullptr) continue;
      for (const ir::Use& use : output->uses()) {
        const std::string& op = use.node->op_type();
        if (after_div < 0) {
          bool eps_add = op == "Add" && SoleActivationInput(*use.node) != nullptr;
          if (eps_add || IsOneOf(op, {"Pow", "Mul", "ReduceMean", "Sqrt", "Div", "Reciprocal"})) {
            stack.push_back({use.node, -1});
          }
        } else if (after_div < 2 && IsOneOf(op, {"Mul", "Add"}) &&
                   SoleActivationInput(*use.node) != nullptr) {
          stack.push_back({use.node, after_div + 1});  // gamma, beta
        }
      }
    }
  }
}

}  // namespace

std::unordered_set<const ir::Node*> FindNoQuantizeNodes(const ir::Graph& graph) {
  std::unordered_set<const ir::Node*> out;
  for (const ir::Node* node : graph.nodes()) {
    const std::string& op = node->op_type();
    if (op == "Softmax" || op == "LayerNormalization" || op == "LogSoftmax") {
      out.insert(node);
      continue;
    }
    if (op != "ReduceMean" || node->input(0) == nullptr) continue;
    const ir::Value* x = node->input(0);
    for (const ir::Use& use : node->output(0)->uses()) {
      const ir::Node* sub = use.node;
      if (sub->op_type() == "Sub" && sub->input(0) == x && sub->input(1) == node->output(0)) {
        out.insert(node);
        CollectLayerNorm(sub, out);
      }
    }
  }
  return out;
}

std::optional<AttentionMatMul> MatchAttentionMatMul(const ir::Node& matmul) {
  if (matmul.op_type() != "MatMul" || matmul.num_inputs() != 2) return std::nullopt;
  if (IsConstantValue(matmul.input(0)) || IsConstantValue(matmul.input(1))) return std::nullopt;
  // BMM1: output -> (scale / mask / reshape)* -> Softmax.
  const ir::Value* value = matmul.output(0);
  for (int step = 0; step < 5; ++step) {
    const ir::Node* next = SoleConsumer(value);
    if (next == nullptr) break;
    if (next->op_type() == "Softmax") return AttentionMatMul{next, true};
    if (!IsOneOf(next->op_type(), {"Div", "Mul", "Add", "Where", "Reshape", "Cast"})) break;
    value = next->output(0);
  }
  // BMM2: input 0 <- (dropout / cast / reshape)* <- Softmax.
  value = matmul.input(0);
  for (int step = 0; step < 5 && value != nullptr; ++step) {
    const ir::Node* producer = value->producer();
    if (producer == nullptr) break;
    if (producer->op_type() == "Softmax") return AttentionMatMul{producer, false};
    if (!IsOneOf(producer->op_type(), {"Dropout", "Cast", "Reshape", "Identity"})) break;
    value = producer->input(0);
  }
  return std::nullopt;
}

}  // namespace qtune::quant
