// qtune::Attention on its two fast kernels, side by side in one run: the native AVX-512
// one (native_attention.cc) and the three oneDNN steps (onednn_attention.cc), on a ViT-Tiny
// block's attention (3 heads of 64, 197 tokens) and a BERT-base layer's (12 heads of 64,
// 128 tokens), at 1 and 2 threads. Inputs stay in cache between runs, as in a model where
// the projections just wrote them.
//
//   build/bench/kernels/attention_bench [--benchmark_filter=vit]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "ir/builder.h"
#include "runtime/kernels/kernel.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

Tensor RandomFloats(const std::vector<int64_t>& sizes, uint32_t seed) {
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

// Runs `factory`'s kernel for Attention(Q, K, V) with `heads` heads of 64 over `tokens`.
void Run(benchmark::State& state, KernelFactory factory, int64_t heads, int64_t tokens) {
  const int threads = static_cast<int>(state.range(0));
  const std::vector<int64_t> sizes = {1, tokens, heads * 64};
  ir::GraphBuilder builder(17);
  builder.ImportOpset("qtune", 1);
  ir::OpOptions options;
  options.name = "attention";
  options.domain = "qtune";
  std::vector<ir::Value*> in;
  for (const char* name : {"q", "k", "v"}) {
    in.push_back(builder.Input(name, DataType::kFloat32, sizes));
  }
  builder.Output(builder.MultiOp(
      "Attention", in, 1,
      {ir::Attribute::Int("num_heads", heads), ir::Attribute::Float("scale", 0.125f)}, options)[0]);
  std::unique_ptr<ir::Graph> graph = builder.Build();
  ValueInfo info{DataType::kFloat32, sizes, {}};
  KernelRequest request{*graph->FindNode("attention"), 1, threads, {}, {}, {}};
  request.inputs = {&info, &info, &info};
  request.outputs = {&info};
  request.input_layouts.assign(3, Layout::kPlain);
  auto choice = factory(request);
  if (!choice.ok() || !choice->has_value()) {
    state.SkipWithError("the kernel does not apply on this CPU");
    return;
  }
  std::vector<Tensor> inputs = {RandomFloats(sizes, 1), RandomFloats(sizes, 2),
                                RandomFloats(sizes, 3)};
  std::vector<Tensor> outputs = {*Tensor::Allocate(DataType::kFloat32, sizes)};
  Kernel& kernel = *(*choice)->kernel;
  for (auto _ : state) {
    if (!kernel.Run(inputs, outputs).ok()) std::abort();
    benchmark::ClobberMemory();
  }
  state.SetLabel(kernel.Describe());
  // Two products of 2 * heads * tokens^2 * 64 FLOPs.
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * heads * tokens * tokens * 64 * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(Run, vit_native, &CreateNativeAttentionKernel, 3, 197)->Arg(1)->Arg(2);
BENCHMARK_CAPTURE(Run, vit_onednn, &CreateOnednnAttentionKernel, 3, 197)->Arg(1)->Arg(2);
BENCHMARK_CAPTURE(Run, bert_native, &CreateNativeAttentionKernel, 12, 128)->Arg(1)->Arg(2);
BENCHMARK_CAPTURE(Run, bert_onednn, &CreateOnednnAttentionKernel, 12, 128)->Arg(1)->Arg(2);

}  // namespace
}  // namespace qtune::runtime

BENCHMARK_MAIN();
