// Speed of the fast integer elementwise kernels against the reference tier on a ResNet-50
// sized activation (1x256x56x56, nhwc), printed; the outputs must match byte for byte.
// Timing is reported, not asserted (the machine may be shared).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernel_test_util.h"
#include "runtime/quant_test_tensors.h"

namespace qtune::runtime::kernel_testing {
namespace {

constexpr DataType kU8 = DataType::kUint8;

struct Op {
  std::string op_type, domain;
  std::vector<Tensor> inputs;  // first input dynamic, the rest constants, unless `dynamic`
  std::vector<size_t> dynamic;
  DataType out_type;
  std::string label;
};

// Mean milliseconds of `kernel` over a few runs after one warm-up.
double TimeMs(Kernel& kernel, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  EXPECT_TRUE(kernel.Run(in, out).ok());
  constexpr int kRuns = 10;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) EXPECT_TRUE(kernel.Run(in, out).ok());
  std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  return took.count() / kRuns;
}

void CompareSpeed(const Op& op, int threads) {
  ir::GraphBuilder builder(19);
  if (!op.domain.empty()) builder.ImportOpset(op.domain, 1);
  std::vector<ir::Value*> values;
  std::vector<ValueInfo> infos(op.inputs.size());
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    bool dynamic = std::find(op.dynamic.begin(), op.dynamic.end(), i) != op.dynamic.end();
    values.push_back(dynamic ? builder.Input(name, op.inputs[i].dtype(), op.inputs[i].sizes())
                             : builder.Initializer(name, op.inputs[i]));
    infos[i] = MakeInfo(op.inputs[i].dtype(), op.inputs[i].sizes());
    if (!dynamic) infos[i].constant = op.inputs[i];
  }
  ir::OpOptions options;
  options.name = "node";
  options.domain = op.domain;
  builder.Output(builder.MultiOp(op.op_type, values, 1, {}, options)[0]);
  std::unique_ptr<ir::Graph> graph = builder.Build();
  ValueInfo out_info = MakeInfo(op.out_type, op.inputs[0].sizes());
  KernelRequest request{*graph->FindNode("node"), 19, threads, {}, {&out_info}, {}};
  for (const ValueInfo& info : infos) {
    request.inputs.push_back(&info);
    request.input_layouts.push_back(Layout::kPlain);
  }
  auto fast =
      op.domain == "qtune" ? CreateQAddKernel(request) : CreateQuantElementwiseKernel(request);
  auto reference = CreateReferenceKernel(request);
  ASSERT_TRUE(fast.ok() && fast->has_value()) << op.label;
  ASSERT_TRUE(reference.ok() && reference->has_value()) << op.label;
  auto fast_out = Tensor::Allocate(op.out_type, op.inputs[0].sizes());
  auto reference_out = Tensor::Allocate(op.out_type, op.inputs[0].sizes());
  ASSERT_TRUE(fast_out.ok() && reference_out.ok());
  std::vector<Tensor> fast_outs = {*fast_out}, reference_outs = {*reference_out};
  double fast_ms = TimeMs(*(*fast)->kernel, op.inputs, fast_outs);
  double reference_ms = TimeMs(*(*reference)->kernel, op.inputs, reference_outs);
  EXPECT_EQ(std::memcmp(fast_out->raw_data(), reference_out->raw_data(), fast_out->byte_size()), 0)
      << op.label;
  std::printf("%-34s threads %d: fast %.3f ms (%s), reference %.3f ms, %.1fx\n", op.label.c_str(),
              threads, fast_ms, (*fast)->kernel->Describe().c_str(), reference_ms,
              reference_ms / fast_ms);
}

TEST(QuantElementwiseSpeed, ResNetSizedActivation) {
  uint32_t seed = TestSeed(8401);
  std::mt19937 rng(seed);
  const std::vector<int64_t> sizes = {1, 256, 56, 56};
  Tensor a = RandomQuantTensor(kU8, sizes, rng);
  Tensor b = RandomQuantTensor(kU8, sizes, rng);
  Tensor x = RandomTensor(sizes, rng, -3.0f, 3.0f);
  Tensor scale = Tensor::Scalar<float>(0.0237f);
  std::vector<Op> ops = {
      {kQAdd,
       "qtune",
       {a, Tensor::Scalar<float>(0.031f), QuantScalar(kU8, 128), b, Tensor::Scalar<float>(0.027f),
        QuantScalar(kU8, 120), Tensor::Scalar<float>(0.05f), QuantScalar(kU8, 100)},
       {0, 3},
       kU8,
       "QAdd u8 1x256x56x56"},
      {"QuantizeLinear", "", {x, scale, QuantScalar(kU8, 128)}, {0}, kU8, "QuantizeLinear u8"},
      {"DequantizeLinear",
       "",
       {a, scale, QuantScalar(kU8, 128)},
       {0},
       DataType::kFloat32,
       "DequantizeLinear u8"},
  };
  for (int threads : {1, 2}) {
    for (const Op& op : ops) CompareSpeed(op, threads);
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
