// Harness for the fast-kernel tests: runs one node through a kernel factory and checks the
// kernel against the reference tier (runtime::EvaluateNode), the ggml/XNNPACK way.
//
//   KernelCase c;
//   c.factory = &CreateOnednnConvKernel;
//   c.op_type = "Conv";
//   c.inputs = {Dynamic(x, Layout::kNhwc), Constant(w)};
//   c.label = "3x3 stride 2";
//   EXPECT_TRUE(CheckKernel(c));
//
// CheckKernel builds a one-node graph (constant inputs as initializers), computes the
// reference outputs, asks the factory for a kernel, presents every activation in the layout
// the kernel's choice demands, runs it on outputs framed by sentinels (and pre-filled with
// NaN, so an element the kernel never writes shows up), and compares with the case's
// tolerance. A failure message names the label, the seed and the kernel.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/attribute.h"
#include "runtime/kernels/kernel.h"

namespace qtune::runtime::kernel_testing {

using ir::Attribute;

// The seed of a test: $QTUNE_TEST_SEED when set (to replay a failure), else `fallback`.
uint32_t TestSeed(uint32_t fallback);

// float32 tensor of uniform values in [lo, hi).
Tensor RandomTensor(const std::vector<int64_t>& sizes, std::mt19937& rng, float lo = -1.0f,
                    float hi = 1.0f);

// Rank-4 float32 layout conversion for tests: logical [N,C,H,W] <-> physical [N,H,W,C].
Tensor PlainToNhwc(const Tensor& plain);
Tensor NhwcToPlain(const Tensor& nhwc);
// `plain` stored in `layout` (physical sizes); REQUIRES rank 4 for kNhwc.
Tensor ToLayout(const Tensor& plain, Layout layout);

// "1x3x7x7"
std::string SizesString(const std::vector<int64_t>& sizes);

// One of `options`, uniformly (random test geometries).
inline int64_t Pick(std::mt19937& rng, const std::vector<int64_t>& options) {
  return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
}

// One node input as the test presents it: Dynamic (computed at run time, living in a
// layout), Constant (an initializer) or Omitted.
struct KernelInput {
  Tensor value;                    // logical sizes, plain order; invalid = omitted input
  bool constant = false;           // an initializer: ValueInfo.constant is set
  Layout layout = Layout::kPlain;  // where the value lives when the kernel is requested
};
inline KernelInput Dynamic(Tensor value, Layout layout = Layout::kPlain) {
  return {std::move(value), false, layout};
}
inline KernelInput Constant(Tensor value) { return {std::move(value), true, Layout::kPlain}; }
inline KernelInput Omitted() { return {}; }

enum class Expect {
  kFastPath,       // the factory must return a kernel, and it must match the reference
  kNotApplicable,  // the factory must return nullopt (not an error)
  // The factory may decline (oneDNN has only its reference implementation for this case,
  // which the kernels refuse, on some or all CPUs); a kernel it returns must match.
  kFastPathIfSupported,
};

struct KernelCase {
  KernelFactory factory = nullptr;
  std::string op_type;
  std::string domain;  // "" (ONNX) or "qtune"
  std::vector<Attribute> attributes;
  std::vector<KernelInput> inputs;
  size_t num_outputs = 1;
  int64_t opset = 17;
  Expect expect = Expect::kFastPath;
  // Pass when max |kernel - reference| <= tolerance * (1 + max |reference|).
  double tolerance = 1e-4;
  // >= 0: output 0 shares its buffer with this input (an in-place run).
  int in_place_input = -1;
  std::string label;  // what the case is, printed on failure
  uint32_t seed = 0;  // printed on failure
};

::testing::AssertionResult CheckKernel(const KernelCase& kernel_case);

// One of an op's fast kernels under test, and whether it applies on this CPU (a native
// AVX-512 kernel must decline elsewhere, where the oneDNN one serves the op).
struct NamedFactory {
  const char* name;
  KernelFactory create;
  bool applies;
};

// Runs check() with CheckKernel making kernels for 1, then 2 threads (the variable
// QTUNE_KERNEL_TEST_THREADS), under a trace naming the count.
template <typename Check>
void AtOneAndTwoThreads(const Check& check) {
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(std::string("threads ") + threads);
    setenv("QTUNE_KERNEL_TEST_THREADS", threads, 1);
    check();
  }
  unsetenv("QTUNE_KERNEL_TEST_THREADS");
}

}  // namespace qtune::runtime::kernel_testing
