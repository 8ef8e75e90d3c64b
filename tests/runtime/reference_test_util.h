// Helpers for the reference-kernel tests: run one op on tensors through EvaluateNode, and
// read tensors back as std::vector.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::testing {

using ir::Attribute;

struct OpCall {
  std::string op_type;
  // Invalid (default-constructed) tensors stand for omitted optional inputs.
  std::vector<Tensor> inputs;
  std::vector<Attribute> attributes;
  int64_t opset = 17;
  size_t num_outputs = 1;
  std::string name = "node";
};

// Builds a one-node graph around `call` and runs the node's reference kernel.
inline StatusOr<std::vector<Tensor>> RunOp(const OpCall& call) {
  ir::Graph graph;
  graph.info().opset_imports[""] = call.opset;
  ir::NodeSpec spec;
  spec.op_type = call.op_type;
  spec.name = call.name;
  spec.attributes = call.attributes;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!call.inputs[i].is_valid()) {
      spec.inputs.push_back(nullptr);
      continue;
    }
    auto v = graph.AddInitializer("in" + std::to_string(i), call.inputs[i]);
    if (!v.ok()) return v.status();
    spec.inputs.push_back(*v);
  }
  for (size_t i = 0; i < call.num_outputs; ++i)
    spec.output_names.push_back("out" + std::to_string(i));
  auto node = graph.AddNode(std::move(spec));
  if (!node.ok()) return node.status();
  return EvaluateNode(**node, call.inputs, call.opset);
}

// Runs `call` and returns its first output; fails the test (and returns an invalid
// tensor) on error.
inline Tensor Run1(const OpCall& call) {
  auto out = RunOp(call);
  EXPECT_TRUE(out.ok()) << call.op_type << ": " << out.status().ToString();
  if (!out.ok() || out->empty()) return Tensor();
  return (*out)[0];
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  if (!t.is_valid()) return {};
  auto s = t.span<T>();
  return std::vector<T>(s.begin(), s.end());
}

inline Tensor F32(std::vector<int64_t> sizes, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(sizes), values);
}
inline Tensor I64(std::vector<int64_t> sizes, std::vector<int64_t> values) {
  return Tensor::FromVector<int64_t>(std::move(sizes), values);
}
inline Tensor I32(std::vector<int64_t> sizes, std::vector<int32_t> values) {
  return Tensor::FromVector<int32_t>(std::move(sizes), values);
}
inline Tensor Bool(std::vector<int64_t> sizes, std::vector<bool> values) {
  return Tensor::FromVector<bool>(std::move(sizes), values);
}
// 1-D int64 tensor (shapes, axes, pads...).
inline Tensor Ints(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<int64_t>({n}, values);
}
// float32 tensor of `sizes` holding 0, 1, 2, ...
inline Tensor Iota(std::vector<int64_t> sizes, float start = 0) {
  auto t = Tensor::Allocate(DataType::kFloat32, std::move(sizes));
  float* p = t->data<float>();
  for (int64_t i = 0; i < t->num_elements(); ++i) p[i] = start + static_cast<float>(i);
  return *t;
}

}  // namespace qtune::runtime::testing
