// Test support for qtune's integer fused ops (QConv, QMatMul): seeded random problems in
// real terms, their quantized inputs, the float composition quantize(op(dequantize(x)))
// they approximate, and a runner that pushes one node through a fast-kernel factory
// (layouts, in-place Sum, sentinels around the output) and compares it with the integer
// reference in units of the last place (LSB) of the output's quantization.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "runtime/kernels/kernel.h"

namespace qtune::runtime::quant_testing {

// The seed of a test: $QTUNE_TEST_SEED when set (to replay a failure), else `fallback`.
uint32_t TestSeed(uint32_t fallback);

enum class SumKind { kNone, kFloat, kInt8, kUint8 };

// A QConv (2-D) or QMatMul problem. Quantized tensors are drawn uniformly over their type's
// range; scales are chosen so the pre-activation value has a standard deviation near 4 and
// y_scale resolves it to about 1/16.
struct QSpec {
  bool matmul = false;
  // QConv: X [n, c_in, h, w], W [c_out, c_in / group, k...]. QMatMul: A [n, h, c_in] (n or
  // h may be 1), W [c_in, c_out].
  int64_t n = 1, c_in = 8, c_out = 8, h = 5, w = 5, group = 1;
  std::vector<int64_t> kernel = {3, 3}, strides = {1, 1}, dilations = {1, 1};
  std::vector<int64_t> pads;  // empty: attribute absent
  std::string auto_pad;       // empty: attribute absent
  DataType x_type = DataType::kUint8;
  DataType w_type = DataType::kInt8;
  bool w_zero_points = false;  // nonzero weight zero points (per channel when per_channel)
  bool per_channel = true;     // w_scale per output channel
  bool bias = true;
  DataType y_type = DataType::kUint8;  // kFloat32: y_scale omitted, float output
  SumKind sum = SumKind::kNone;        // QConv only
  std::string activation;              // "" for none
  std::vector<float> activation_params;
  std::vector<float> post_linear;  // {scale, shift} or empty
};
std::string Describe(const QSpec& spec);

// A node's inputs in quant_ops.h numbering (invalid tensor = omitted), plain layout.
struct QCase {
  QSpec spec;
  std::vector<ir::Attribute> attributes;
  std::vector<Tensor> inputs;
  std::string label;
  uint32_t seed = 0;
};
QCase MakeQCase(const QSpec& spec, std::mt19937& rng, uint32_t seed);

// A random problem: X/W/Y types, per-tensor/per-channel scales, bias, Sum kind (QConv),
// activation, geometry (QConv: kernel 1/3/5, strides, dilations, pads or auto_pad, groups
// and depthwise), odd channel counts and batch 1 or 2. `weight_zero_points` allows W with
// nonzero zero points and u8 W (the integer reference handles them; the fast kernels need
// w - w_zp to fit int8).
struct RandomSpecOptions {
  bool matmul = false;
  bool weight_zero_points = false;
};
QSpec RandomSpec(std::mt19937& rng, const RandomSpecOptions& options);

// The one-node graph of a case: X and Sum are graph inputs, everything else initializers.
struct QGraph {
  std::unique_ptr<ir::Graph> graph;
  const ir::Node* node = nullptr;
};
QGraph BuildGraph(const QCase& c);

// The integer reference ("qtune::QConv"/"qtune::QMatMul").
StatusOr<Tensor> RunIntegerReference(const QCase& c);
// quantize(activation(op(dq(X), dq(W)) + B + dq(Sum))) through the float "Conv"/"MatMul"
// reference kernels, dequantizing and quantizing by hand.
StatusOr<Tensor> RunFloatComposition(const QCase& c);

// Differences between two outputs of the same type: integer outputs in LSB, float outputs
// relative to 1 + max |want|.
struct Diff {
  int64_t total = 0, exact = 0;
  double max_error = 0;  // LSB (integer types) or relative (float32)
  std::string first_mismatch;
};
Diff CompareOutputs(const Tensor& got, const Tensor& want);

// One run of a fast-kernel factory on a case.
struct FastRun {
  bool applied = false;  // false: the factory returned NotApplicable
  std::string kernel_name;
  Tensor output;  // plain layout
  int inplace_input = -1;
};
struct FastRunOptions {
  int threads = 1;
  bool in_place = true;  // share the output with the input the kernel offers
};
// Creates the kernel (inputs X and Sum presented in kNhwc for rank 4, else plain), runs it
// twice on differently pre-filled outputs framed by sentinels, and fails when a sentinel or
// an input changes or the two runs differ.
StatusOr<FastRun> RunFast(const QCase& c, KernelFactory factory, const FastRunOptions& options);

// The request a compiler would make for `node` (constants known, X/Sum in `activation`).
struct OwnedRequest {
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::unique_ptr<KernelRequest> request;
};
std::unique_ptr<OwnedRequest> MakeRequest(const ir::Node& node, const std::vector<Tensor>& inputs,
                                          const std::vector<bool>& constant,
                                          const std::vector<ValueInfo>& outputs, Layout activation,
                                          int threads);

// A kernel created for a case, with its inputs in the layouts it asked for and an output
// buffer (physical sizes), ready to run repeatedly (timing).
struct PreparedKernel {
  QGraph graph;
  std::unique_ptr<OwnedRequest> request;
  std::unique_ptr<Kernel> kernel;  // null when the factory returned NotApplicable
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};
StatusOr<std::unique_ptr<PreparedKernel>> Prepare(const QCase& c, KernelFactory factory,
                                                  int threads);

// Median wall time of `kernel` in milliseconds over `repeats` runs after `warmup` runs.
double MedianMillis(Kernel& kernel, std::span<const Tensor> inputs, std::span<Tensor> outputs,
                    int warmup, int repeats);

}  // namespace qtune::runtime::quant_testing
