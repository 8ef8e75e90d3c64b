// Helpers for the shape-inference tests: build a small graph, infer, and check every
// node against the sizes its reference kernel actually produces.
#pragma once

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/reference/registry.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::runtime::shape_testing {

using ir::Attribute;
using ir::GraphBuilder;
using ir::Value;
using Sizes = std::vector<int64_t>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

inline Tensor Ints(const Sizes& v) { return Tensor::FromVector<int64_t>({int64_t(v.size())}, v); }
inline Tensor Floats(const std::vector<float>& v) {
  return Tensor::FromVector<float>({int64_t(v.size())}, v);
}
inline Tensor Zeros(const Sizes& sizes) { return *Tensor::Allocate(DataType::kFloat32, sizes); }

inline std::map<std::string, Sizes> InputSizes(const ir::Graph& graph) {
  std::map<std::string, Sizes> sizes;
  for (const ir::Value* in : graph.inputs()) sizes[in->name()] = in->type().shape->sizes();
  return sizes;
}

// Runs every node's reference kernel on inputs of the inferred sizes (constants where
// known, zeros elsewhere) and checks that its outputs have the inferred dtype and sizes.
inline void ExpectReferenceAgrees(const ir::Graph& graph, const ValueInfoMap& infos) {
  auto order = graph.TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  for (const ir::Node* node : *order) {
    std::vector<Tensor> inputs;
    for (const ir::Value* v : node->inputs()) {
      if (v == nullptr) {
        inputs.emplace_back();
        continue;
      }
      const ValueInfo& info = infos.at(v);
      inputs.push_back(info.has_constant() ? info.constant
                                           : *Tensor::Allocate(info.dtype, info.sizes));
    }
    auto outputs = EvaluateNode(*node, inputs, graph.onnx_opset());
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      if (node->output(i) == nullptr) continue;
      const ValueInfo& info = infos.at(node->output(i));
      EXPECT_EQ((*outputs)[i].sizes(), info.sizes) << node->DebugName() << " output " << i;
      EXPECT_EQ((*outputs)[i].dtype(), info.dtype) << node->DebugName() << " output " << i;
    }
  }
}

// Marks `outputs` as graph outputs, builds, infers, checks against the reference kernels
// and returns each output's info (empty on an inference error, which fails the test).
inline std::vector<ValueInfo> Infer(GraphBuilder& b, const std::vector<Value*>& outputs) {
  for (Value* y : outputs) b.Output(y);
  std::unique_ptr<ir::Graph> graph = b.Build();
  auto infos = InferShapes(*graph, InputSizes(*graph), ShapeInferenceOptions{});
  EXPECT_TRUE(infos.ok()) << infos.status().ToString();
  if (!infos.ok()) return {};
  ExpectReferenceAgrees(*graph, *infos);
  std::vector<ValueInfo> result;
  for (Value* y : outputs) result.push_back(infos->at(y));
  return result;
}

inline Sizes SizesOf(GraphBuilder& b, Value* y) {
  std::vector<ValueInfo> infos = Infer(b, {y});
  return infos.empty() ? Sizes{-1} : infos[0].sizes;
}

// The error InferShapes gives (OK if it succeeds).
inline Status InferError(GraphBuilder& b, Value* y) {
  b.Output(y);
  std::unique_ptr<ir::Graph> graph = b.Build();
  return InferShapes(*graph, InputSizes(*graph), ShapeInferenceOptions{}).status();
}

// Y = op(x, w) with x and w of the given sizes.
inline Sizes ConvLike(const std::string& op, const Sizes& x, const Sizes& w,
                      std::vector<Attribute> attributes) {
  GraphBuilder b(17);
  Value* xv = b.Input("x", DataType::kFloat32, x);
  return SizesOf(b, b.Op(op, {xv, b.Initializer("w", Zeros(w))}, std::move(attributes)));
}

inline Sizes Pool(const std::string& op, const Sizes& x, std::vector<Attribute> attributes) {
  GraphBuilder b(17);
  return SizesOf(b, b.Op(op, {b.Input("x", DataType::kFloat32, x)}, std::move(attributes)));
}

}  // namespace qtune::runtime::shape_testing
