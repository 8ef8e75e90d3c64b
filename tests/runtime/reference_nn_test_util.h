// Test helpers for the reference NN kernels: run one kernel on a single-node graph, make
// seeded random tensors, compare with tolerances, and read ONNX's node test cases
// (/usr/share/libonnx-testdata/data/node/<name>/) as expected values.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "runtime/reference/nn_kernels.h"

namespace qtune::runtime::nn::testing {

// Runs `kernel` on a fresh graph holding one node of `op_type` with the given attributes.
// An invalid Tensor among `inputs` is an omitted optional input; `num_outputs` outputs
// named y0, y1, ... (an empty `output_present` means all are present).
struct NodeSpecForTest {
  std::string op_type;
  std::vector<ir::Attribute> attributes;
  int64_t opset = 17;
  size_t num_outputs = 1;
  std::vector<bool> output_present;
};
KernelResult RunNode(ReferenceKernel kernel, const NodeSpecForTest& spec,
                     const std::vector<Tensor>& inputs);
// Shorthand for single-output ops: asserts success (with the message) and returns output 0.
Tensor RunOk(ReferenceKernel kernel, const NodeSpecForTest& spec,
             const std::vector<Tensor>& inputs);

// Uniform values in [lo, hi), deterministic in `seed`.
Tensor RandomFloats(std::vector<int64_t> sizes, uint32_t seed, float lo = -1, float hi = 1);
Tensor RandomDoubles(std::vector<int64_t> sizes, uint32_t seed, double lo = -1, double hi = 1);
std::vector<double> AsDoubles(const Tensor& t);

// Checks sizes and every element within atol + rtol * |expected|; reports the first
// mismatches with their flat index.
::testing::AssertionResult TensorsNear(const Tensor& actual, const Tensor& expected,
                                       double atol = 1e-5, double rtol = 1e-5);

// Sum of element products (for adjoint identities).
double Dot(const Tensor& a, const Tensor& b);

// An ONNX backend node test: the single node of model.onnx, its inputs and outputs.
struct OnnxNodeCase {
  std::unique_ptr<ir::Graph> graph;
  ir::Node* node = nullptr;
  int64_t opset = 0;
  std::vector<Tensor> inputs;   // per node input; invalid where omitted
  std::vector<Tensor> outputs;  // per node output
};
// Nullopt (the caller skips) when the ONNX test data is not installed; fails the test on a
// malformed case.
std::optional<OnnxNodeCase> LoadOnnxNodeCase(const std::string& name);
// Loads case `name`, runs `kernel`, compares every expected output.
void CheckOnnxNodeCase(const std::string& name, ReferenceKernel kernel, double atol = 1e-5,
                       double rtol = 1e-5);

}  // namespace qtune::runtime::nn::testing
