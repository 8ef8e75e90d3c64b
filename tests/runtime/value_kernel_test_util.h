// Helpers for the value-kernel tests: run one sequence/optional op on RunValues through
// ValueKernelRegistry, and build and read sequences.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/run_value.h"
#include "ir/builder.h"
#include "reference_test_util.h"
#include "runtime/reference/value_kernels.h"

namespace qtune::runtime::testing {

using Sizes = std::vector<int64_t>;

struct ValueCall {
  std::string op_type;
  // RunValue() (an invalid tensor) stands for an omitted input.
  std::vector<RunValue> inputs;
  std::vector<Attribute> attributes;
  int64_t opset = 18;
  size_t num_outputs = 1;
  std::string name = "node";
};

// The graph value type that matches `value` (a sequence's type is its element type).
inline ir::TensorType TypeOf(const RunValue& value) {
  ir::TensorType type;
  if (value.is_sequence()) {
    type.kind = ir::ValueKind::kSequence;
    type.dtype = value.elem_dtype();
  } else if (value.is_none()) {
    type.kind = ir::ValueKind::kOptional;
  } else {
    type.dtype = value.tensor().dtype();
  }
  return type;
}

// Builds a one-node graph around `call` and runs the node's value kernel.
inline StatusOr<std::vector<RunValue>> RunValueOp(const ValueCall& call) {
  ir::GraphBuilder b(call.opset);
  std::vector<ir::Value*> inputs;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const RunValue& in = call.inputs[i];
    if (in.is_tensor() && !in.tensor().is_valid()) {
      inputs.push_back(nullptr);
      continue;
    }
    ir::Value* v = b.Input("in" + std::to_string(i), DataType::kFloat32, Sizes{});
    v->set_type(TypeOf(in));
    inputs.push_back(v);
  }
  b.MultiOp(call.op_type, inputs, call.num_outputs, call.attributes, {.name = call.name});
  const ir::Node& node = *b.last_node();
  ValueKernel kernel = ValueKernelRegistry::Get().FindFor(node);
  if (kernel == nullptr) return NotFoundError("no value kernel for " + call.op_type);
  return kernel({.node = node, .inputs = call.inputs, .opset = call.opset});
}

// Runs `call`, expects success and one output.
inline RunValue Run1Value(const ValueCall& call) {
  auto out = RunValueOp(call);
  EXPECT_TRUE(out.ok()) << call.op_type << ": " << out.status().ToString();
  if (!out.ok() || out->size() != 1) return RunValue();
  return (*out)[0];
}

// Expects InvalidArgument naming the node ("<op> 'bad'") and containing `fragment`.
inline void ExpectNodeError(ValueCall call, const std::string& fragment) {
  call.name = "bad";
  auto out = RunValueOp(call);
  ASSERT_FALSE(out.ok()) << call.op_type << " should have failed";
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().ToString();
  EXPECT_NE(out.status().message().find(call.op_type + " 'bad'"), std::string::npos)
      << out.status().ToString();
  EXPECT_NE(out.status().message().find(fragment), std::string::npos) << out.status().ToString();
}

inline RunValue T(Tensor t) { return RunValue::Of(std::move(t)); }

// A float32 sequence of 1-D tensors holding {0}, {1, 1}, {2, 2, 2}, ... (`count` of them).
inline RunValue Seq(int count) {
  std::vector<Tensor> elements;
  for (int i = 0; i < count; ++i) {
    elements.push_back(F32({i + 1}, std::vector<float>(i + 1, static_cast<float>(i))));
  }
  return RunValue::Sequence(DataType::kFloat32, std::move(elements));
}

// The first value of each element (which identifies it for Seq()).
inline std::vector<float> Heads(const RunValue& v) {
  std::vector<float> heads;
  if (!v.is_sequence()) return heads;
  for (const Tensor& t : v.sequence()) heads.push_back(t.num_elements() ? t.data<float>()[0] : -1);
  return heads;
}

}  // namespace qtune::runtime::testing
