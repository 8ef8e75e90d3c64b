// Helpers for the pass tests: building small graphs by hand, counting ops, and a toy
// evaluator that lets fold_constants be tested without the runtime.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"
#include "ir/verify.h"
#include "passes/pass.h"

namespace qtune::passes::testing {

inline ir::TensorType F32(std::vector<int64_t> sizes) {
  return {DataType::kFloat32, Shape::FromSizes(sizes)};
}

struct OpSpec {
  std::string op_type;
  std::vector<ir::Value*> inputs;
  std::vector<std::string> outputs;
  std::vector<ir::Attribute> attributes = {};
  std::string domain = "";
};

// Adds a node named "<first output>_node". Fails the test if the graph refuses it.
inline ir::Node* AddOp(ir::Graph& graph, OpSpec spec) {
  std::string name = spec.outputs.empty() ? spec.op_type : spec.outputs[0] + "_node";
  auto node = graph.AddNode({.op_type = spec.op_type,
                             .domain = spec.domain,
                             .name = name,
                             .inputs = spec.inputs,
                             .output_names = spec.outputs,
                             .attributes = spec.attributes});
  EXPECT_TRUE(node.ok()) << node.status().ToString();
  return node.ok() ? *node : nullptr;
}

inline ir::Value* AddInit(ir::Graph& graph, const std::string& name, Tensor tensor) {
  auto value = graph.AddInitializer(name, std::move(tensor));
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : nullptr;
}

inline int CountOps(const ir::Graph& graph, const std::string& op_type) {
  int count = 0;
  for (const ir::Node* node : graph.nodes()) count += node->op_type() == op_type;
  return count;
}

inline std::vector<std::string> OutputNames(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (const ir::Value* out : graph.outputs()) names.push_back(out->name());
  return names;
}

inline std::vector<float> Floats(const Tensor& tensor) {
  auto span = tensor.span<float>();
  return {span.begin(), span.end()};
}

// Uniform values in [-1, 1) from a fixed seed.
inline Tensor RandomTensor(std::vector<int64_t> sizes, uint32_t seed, float low = -1.0f,
                           float high = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(static_cast<size_t>(NumElements(sizes)));
  for (float& v : values) v = dist(rng);
  return Tensor::FromVector<float>(std::move(sizes), values);
}

#define EXPECT_VERIFIES(graph)                             \
  do {                                                     \
    ::qtune::Status verified = ::qtune::ir::Verify(graph); \
    EXPECT_TRUE(verified.ok()) << verified.ToString();     \
  } while (0)

PassOptions TestOptions();

// A toy evaluator: float32 Add and Mul of equal-shaped inputs or with a one-element second
// input; "Fail" returns InvalidArgument; every other op is Unimplemented. Counts calls.
struct ToyEvaluator {
  int* calls = nullptr;
  StatusOr<std::vector<Tensor>> operator()(const ir::Node& node, std::span<const Tensor> inputs,
                                           int64_t opset) const;
};

}  // namespace qtune::passes::testing
