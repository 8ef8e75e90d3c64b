// BERT/ViT-style encoder layers in the decomposed form exporters emit (LayerNorm and GELU
// spelled out in elementwise ops, attention as MatMul/Reshape/Transpose/Softmax), built
// with GraphBuilder and seeded random weights, for the transformer fusion and kernel tests.
#pragma once

#include <cstdint>
#include <memory>
#include <random>

#include "core/tensor.h"
#include "ir/builder.h"
#include "ir/graph.h"

namespace qtune::testing {

// How the GELU between the two feed-forward MatMuls is spelled.
enum class GeluForm {
  kHalfXTimesErf,      // (x * 0.5) * (1 + Erf(x / sqrt2))   (HF BERT)
  kXTimesErfThenHalf,  // (x * (1 + Erf(x * 1/sqrt2))) * 0.5
  kErfHalfThenX,       // x * ((1 + Erf(x / sqrt2)) * 0.5)
  kTanhPow,            // 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * Pow(x, 3))))
  kTanhCubeByMul,      // the same with x * x * x
};

struct EncoderOptions {
  int64_t opset = 13;  // 18 gives ReduceMean its axes as an input
  int64_t hidden = 64;
  int64_t heads = 4;
  int64_t ffn = 256;
  int layers = 1;
  GeluForm gelu = GeluForm::kHalfXTimesErf;
  bool square_by_mul = false;  // LayerNorm's d^2 as Mul(d, d) instead of Pow(d, 2)
  uint64_t seed = 1;
};

// Input "x" [batch, seq, hidden] (batch and seq symbolic), output "y" of the same sizes.
std::unique_ptr<ir::Graph> BuildEncoder(const EncoderOptions& options);

// Helpers for small single-pattern graphs.
class EncoderBuilder {
 public:
  EncoderBuilder(ir::GraphBuilder& b, uint64_t seed) : b_(b), rng_(seed) {}

  ir::Value* Scalar(float v);
  ir::Value* Int64s(const std::vector<int64_t>& values);
  // Uniform(-scale, scale) initializer, or offset + that when `offset` is given.
  ir::Value* Random(const std::vector<int64_t>& sizes, float scale, float offset = 0);
  ir::Value* Linear(ir::Value* x, int64_t in, int64_t out);  // MatMul + Add(bias)
  ir::Value* LayerNorm(ir::Value* x, int64_t hidden, int64_t opset, bool square_by_mul);
  ir::Value* Gelu(ir::Value* x, GeluForm form);
  ir::Value* Attention(ir::Value* x, int64_t hidden, int64_t heads);

 private:
  ir::Value* Mul(ir::Value* a, ir::Value* b) { return b_.Op("Mul", {a, b}); }
  ir::Value* Add(ir::Value* a, ir::Value* b) { return b_.Op("Add", {a, b}); }

  ir::GraphBuilder& b_;
  std::mt19937 rng_;
  int counter_ = 0;
};

// Uniform(-1, 1) float32 tensor from `seed`.
Tensor RandomTensor(const std::vector<int64_t>& sizes, uint64_t seed);

}  // namespace qtune::testing
