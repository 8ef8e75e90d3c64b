// Helpers for the quantization reference-kernel tests: tensors of the narrow types, and a
// runner that executes one node's reference kernel AND its shape function, checking that
// the shape function predicts the kernel's output types and sizes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/float_convert.h"
#include "reference_test_util.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime::testing {

inline Tensor U8(std::vector<int64_t> sizes, std::vector<uint8_t> v) {
  return Tensor::FromVector<uint8_t>(std::move(sizes), v);
}
inline Tensor I8(std::vector<int64_t> sizes, std::vector<int8_t> v) {
  return Tensor::FromVector<int8_t>(std::move(sizes), v);
}
inline Tensor U16(std::vector<int64_t> sizes, std::vector<uint16_t> v) {
  return Tensor::FromVector<uint16_t>(std::move(sizes), v);
}
inline Tensor I16(std::vector<int64_t> sizes, std::vector<int16_t> v) {
  return Tensor::FromVector<int16_t>(std::move(sizes), v);
}
inline Tensor ScalarF32(float v) { return Tensor::Scalar<float>(v); }

// float16 / bfloat16 tensors from float values (rounded to nearest even).
inline Tensor Half(std::vector<int64_t> sizes, const std::vector<float>& v,
                   DataType type = DataType::kFloat16) {
  Tensor t = *Tensor::Allocate(type, std::move(sizes));
  for (size_t i = 0; i < v.size(); ++i) {
    t.data<uint16_t>()[i] = type == DataType::kFloat16 ? FloatToHalf(v[i]) : FloatToBfloat16(v[i]);
  }
  return t;
}
// float8 tensors from raw bit patterns.
inline Tensor Float8(DataType type, std::vector<int64_t> sizes, const std::vector<uint8_t>& bits) {
  Tensor t = *Tensor::Allocate(type, std::move(sizes));
  for (size_t i = 0; i < bits.size(); ++i) t.data<uint8_t>()[i] = bits[i];
  return t;
}
// Raw element bytes of a one-byte tensor (float8 outputs).
inline std::vector<uint8_t> Bits(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.num_elements());
}
// Elements of a float16 tensor as float.
inline std::vector<float> HalfValues(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(HalfToFloat(t.data<uint16_t>()[i]));
  return v;
}

// Runs the node's shape function on `call`'s input types and sizes.
inline StatusOr<std::vector<ValueInfo>> InferOp(const OpCall& call) {
  ir::Graph graph;
  graph.info().opset_imports[""] = call.opset;
  ir::NodeSpec spec;
  spec.op_type = call.op_type;
  spec.name = call.name;
  spec.attributes = call.attributes;
  std::vector<ValueInfo> infos(call.inputs.size());
  std::vector<const ValueInfo*> pointers;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!call.inputs[i].is_valid()) {
      spec.inputs.push_back(nullptr);
      pointers.push_back(nullptr);
      continue;
    }
    auto v = graph.AddInitializer("in" + std::to_string(i), call.inputs[i]);
    if (!v.ok()) return v.status();
    spec.inputs.push_back(*v);
    infos[i] = MakeInfo(call.inputs[i].dtype(), call.inputs[i].sizes());
    pointers.push_back(&infos[i]);
  }
  for (size_t i = 0; i < call.num_outputs; ++i)
    spec.output_names.push_back("out" + std::to_string(i));
  auto node = graph.AddNode(std::move(spec));
  if (!node.ok()) return node.status();
  ShapeFn fn = ShapeRegistry::Get().Find(call.op_type);
  if (fn == nullptr) return NotFoundError("no shape function for " + call.op_type);
  return fn(ShapeArgs{**node, pointers, call.opset});
}

// Runs the reference kernel; on success also checks that the shape function agrees with
// the outputs' types and sizes.
inline StatusOr<std::vector<Tensor>> RunQuant(const OpCall& call) {
  auto outputs = RunOp(call);
  if (!outputs.ok()) return outputs;
  auto infos = InferOp(call);
  EXPECT_TRUE(infos.ok()) << call.op_type << " shape function: " << infos.status().ToString();
  if (infos.ok()) {
    EXPECT_GE(infos->size(), outputs->size());
    for (size_t i = 0; i < outputs->size() && i < infos->size(); ++i) {
      EXPECT_EQ((*infos)[i].dtype, (*outputs)[i].dtype()) << call.op_type << " output " << i;
      EXPECT_EQ((*infos)[i].sizes, (*outputs)[i].sizes()) << call.op_type << " output " << i;
    }
  }
  return outputs;
}

// RunQuant's first output; fails the test on error.
inline Tensor RunQuant1(const OpCall& call) {
  auto out = RunQuant(call);
  EXPECT_TRUE(out.ok()) << call.op_type << ": " << out.status().ToString();
  if (!out.ok() || out->empty()) return Tensor();
  return (*out)[0];
}

// The status code of running `call` (kOk when it succeeds).
inline StatusCode CodeOf(const OpCall& call) { return RunOp(call).status().code(); }

}  // namespace qtune::runtime::testing
