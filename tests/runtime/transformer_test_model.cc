#include "runtime/transformer_test_model.h"

#include <cmath>
#include <numbers>
#include <string>

namespace qtune::testing {

using ir::Attribute;
using ir::Value;

Value* EncoderBuilder::Scalar(float v) {
  Tensor t = *Tensor::Allocate(DataType::kFloat32, {});
  t.data<float>()[0] = v;
  return b_.Initializer("c" + std::to_string(counter_++), t);
}

Value* EncoderBuilder::Int64s(const std::vector<int64_t>& values) {
  Tensor t = *Tensor::Allocate(DataType::kInt64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return b_.Initializer("i" + std::to_string(counter_++), t);
}

Value* EncoderBuilder::Random(const std::vector<int64_t>& sizes, float scale, float offset) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (float& v : t.span<float>()) v = offset + dist(rng_);
  return b_.Initializer("w" + std::to_string(counter_++), t);
}

Value* EncoderBuilder::Linear(Value* x, int64_t in, int64_t out) {
  float scale = 1.0f / std::sqrt(static_cast<float>(in));
  Value* w = Random({in, out}, scale);
  Value* bias = Random({out}, 0.1f);
  return Add(b_.Op("MatMul", {x, w}), bias);
}

Value* EncoderBuilder::LayerNorm(Value* x, int64_t hidden, int64_t opset, bool square_by_mul) {
  auto mean = [&](Value* v) {
    if (opset >= 18) return b_.Op("ReduceMean", {v, Int64s({-1})});
    return b_.Op("ReduceMean", {v}, {Attribute::Ints("axes", {-1})});
  };
  Value* d = b_.Op("Sub", {x, mean(x)});
  Value* square = square_by_mul ? Mul(d, d) : b_.Op("Pow", {d, Scalar(2.0f)});
  Value* denom = b_.Op("Sqrt", {Add(mean(square), Scalar(1e-12f))});
  Value* n = b_.Op("Div", {d, denom});
  return Add(Mul(n, Random({hidden}, 0.1f, 1.0f)), Random({hidden}, 0.1f));
}

Value* EncoderBuilder::Gelu(Value* x, GeluForm form) {
  const float sqrt2 = static_cast<float>(std::numbers::sqrt2);
  switch (form) {
    case GeluForm::kHalfXTimesErf: {
      Value* erf = b_.Op("Erf", {b_.Op("Div", {x, Scalar(1.4142135f)})});
      return Mul(Mul(x, Scalar(0.5f)), Add(erf, Scalar(1.0f)));
    }
    case GeluForm::kXTimesErfThenHalf: {
      Value* erf = b_.Op("Erf", {Mul(Scalar(1.0f / sqrt2), x)});
      return Mul(Mul(x, Add(Scalar(1.0f), erf)), Scalar(0.5f));
    }
    case GeluForm::kErfHalfThenX: {
      Value* erf = b_.Op("Erf", {b_.Op("Div", {x, Scalar(1.41421f)})});
      return Mul(x, Mul(Add(erf, Scalar(1.0f)), Scalar(0.5f)));
    }
    case GeluForm::kTanhPow:
    case GeluForm::kTanhCubeByMul: {
      Value* cube =
          form == GeluForm::kTanhPow ? b_.Op("Pow", {x, Scalar(3.0f)}) : Mul(Mul(x, x), x);
      Value* inner = Add(x, Mul(Scalar(0.044715f), cube));
      Value* t = b_.Op("Tanh", {Mul(inner, Scalar(0.7978845608f))});
      return Mul(Mul(Scalar(0.5f), x), Add(Scalar(1.0f), t));
    }
  }
  return nullptr;
}

Value* EncoderBuilder::Attention(Value* x, int64_t hidden, int64_t heads) {
  const int64_t head_size = hidden / heads;
  auto split_heads = [&](Value* v, std::vector<int64_t> perm) {
    Value* r = b_.Op("Reshape", {v, Int64s({0, 0, heads, head_size})});
    return b_.Op("Transpose", {r}, {Attribute::Ints("perm", perm)});
  };
  Value* q = split_heads(Linear(x, hidden, hidden), {0, 2, 1, 3});  // [B,H,S,D]
  Value* k = split_heads(Linear(x, hidden, hidden), {0, 2, 3, 1});  // [B,H,D,S]
  Value* v = split_heads(Linear(x, hidden, hidden), {0, 2, 1, 3});  // [B,H,S,D]
  Value* scores = b_.Op("MatMul", {q, k});
  Value* scaled = b_.Op("Div", {scores, Scalar(std::sqrt(static_cast<float>(head_size)))});
  Value* probs = b_.Op("Softmax", {scaled}, {Attribute::Int("axis", -1)});
  Value* context = b_.Op("MatMul", {probs, v});
  Value* merged = b_.Op("Transpose", {context}, {Attribute::Ints("perm", {0, 2, 1, 3})});
  Value* flat = b_.Op("Reshape", {merged, Int64s({0, 0, hidden})});
  return Linear(flat, hidden, hidden);
}

std::unique_ptr<ir::Graph> BuildEncoder(const EncoderOptions& o) {
  ir::GraphBuilder b(o.opset);
  EncoderBuilder e(b, o.seed);
  Value* x = b.Input("x", DataType::kFloat32,
                     Shape({Dim::Symbolic("batch"), Dim::Symbolic("seq"), Dim::Known(o.hidden)}));
  Value* h = x;
  for (int layer = 0; layer < o.layers; ++layer) {
    Value* attention = e.Attention(h, o.hidden, o.heads);
    Value* ln1 = e.LayerNorm(b.Op("Add", {attention, h}), o.hidden, o.opset, o.square_by_mul);
    Value* ffn = e.Linear(e.Gelu(e.Linear(ln1, o.hidden, o.ffn), o.gelu), o.ffn, o.hidden);
    h = e.LayerNorm(b.Op("Add", {ffn, ln1}), o.hidden, o.opset, o.square_by_mul);
  }
  Value* y = b.Op("Identity", {h}, {}, ir::OpOptions{"output", {"y"}, ""});
  b.Output(y);
  return b.Build();
}

Tensor RandomTensor(const std::vector<int64_t>& sizes, uint64_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

}  // namespace qtune::testing
