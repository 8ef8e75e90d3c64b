// Throughput of the standalone int8 boundary kernels on detector-sized activations
// ([1, 96, 160, 160], plain layout): QuantizeLinear f32 -> u8 / s8 and DequantizeLinear
// u8 -> f32, per tensor, through a Session as a model runs them. Reports bytes/s and
// elements/s; compare a change by running before and after on the same machine.
//
//   build/bench/kernels/quant_elementwise_bench [--benchmark_filter=Quantize]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <random>

#include "ir/builder.h"
#include "runtime/session.h"

namespace qtune {
namespace {

constexpr int64_t kChannels = 96, kSide = 160;

Tensor RandomFloats(const std::vector<int64_t>& sizes) {
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-4.0f, 12.0f);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

// x -> QuantizeLinear(scale 0.05, zero point z of `q_type`) [-> DequantizeLinear].
std::unique_ptr<runtime::Session> MakeSession(DataType q_type, bool dequantize, int threads) {
  ir::GraphBuilder b(13);
  const std::vector<int64_t> sizes = {1, kChannels, kSide, kSide};
  ir::Value* x = b.Input("x", DataType::kFloat32, sizes);
  ir::Value* scale = b.Initializer("scale", Tensor::Scalar<float>(0.05f));
  ir::Value* zp = q_type == DataType::kUint8 ? b.Initializer("zp", Tensor::Scalar<uint8_t>(40))
                                             : b.Initializer("zp", Tensor::Scalar<int8_t>(-3));
  ir::Value* q = b.Op("QuantizeLinear", {x, scale, zp});
  b.Output(dequantize ? b.Op("DequantizeLinear", {q, scale, zp}) : q);
  runtime::SessionOptions options;
  options.threads = threads;
  auto session = runtime::Session::Create(*b.Build(), options);
  if (!session.ok()) std::abort();
  return std::move(session).value();
}

void Run(benchmark::State& state, DataType q_type, bool dequantize) {
  const int threads = static_cast<int>(state.range(0));
  auto session = MakeSession(q_type, dequantize, threads);
  runtime::NamedTensors inputs = {{"x", RandomFloats({1, kChannels, kSide, kSide})}};
  for (auto _ : state) {
    auto out = session->Run(inputs);
    if (!out.ok()) state.SkipWithError(out.status().ToString().c_str());
    benchmark::DoNotOptimize(out);
  }
  const int64_t elements = kChannels * kSide * kSide;
  state.SetItemsProcessed(state.iterations() * elements);
  // Quantize reads 4 and writes 1 byte per element; the pair also reads 1 and writes 4.
  state.SetBytesProcessed(state.iterations() * elements * (dequantize ? 10 : 5));
}

void BM_QuantizeU8(benchmark::State& s) { Run(s, DataType::kUint8, false); }
void BM_QuantizeS8(benchmark::State& s) { Run(s, DataType::kInt8, false); }
void BM_QuantizeDequantizeU8(benchmark::State& s) { Run(s, DataType::kUint8, true); }

BENCHMARK(BM_QuantizeU8)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_QuantizeS8)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_QuantizeDequantizeU8)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace qtune

BENCHMARK_MAIN();
