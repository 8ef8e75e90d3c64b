#include "runtime/frontend_test_models.h"

#include <cmath>
#include <vector>

#include "ir/builder.h"
#include "runtime/transformer_test_model.h"

namespace qtune::testing {

using ir::Attribute;
using ir::Value;

namespace {

// [2 * bins, 1, n_fft]: rows 0..bins-1 Hann * cos, rows bins.. -Hann * sin.
Tensor StftFilters(int64_t n_fft) {
  const int64_t bins = n_fft / 2 + 1;
  std::vector<float> w(static_cast<size_t>(2 * bins * n_fft));
  const double pi = 3.14159265358979323846;
  for (int64_t f = 0; f < bins; ++f) {
    for (int64_t t = 0; t < n_fft; ++t) {
      double hann = 0.5 - 0.5 * std::cos(2 * pi * t / n_fft);
      double phase = 2 * pi * f * t / n_fft;
      w[f * n_fft + t] = static_cast<float>(hann * std::cos(phase));
      w[(bins + f) * n_fft + t] = static_cast<float>(-hann * std::sin(phase));
    }
  }
  return Tensor::FromVector<float>({2 * bins, 1, n_fft}, w);
}

// [bins, mels] triangles evenly spaced on the mel scale up to 8 kHz at 16 kHz sampling.
Tensor MelMatrix(int64_t bins, int64_t mels) {
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  auto to_hz = [](double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); };
  std::vector<double> edges;
  for (int64_t m = 0; m < mels + 2; ++m) edges.push_back(to_hz(to_mel(8000.0) * m / (mels + 1)));
  std::vector<float> w(static_cast<size_t>(bins * mels), 0.0f);
  for (int64_t f = 0; f < bins; ++f) {
    double hz = 8000.0 * f / (bins - 1);
    for (int64_t m = 0; m < mels; ++m) {
      double lo = edges[m], mid = edges[m + 1], hi = edges[m + 2];
      double v = hz <= mid ? (hz - lo) / (mid - lo) : (hi - hz) / (hi - mid);
      w[f * mels + m] = static_cast<float>(std::max(0.0, v));
    }
  }
  return Tensor::FromVector<float>({bins, mels}, w);
}

}  // namespace

std::unique_ptr<ir::Graph> BuildAudioFrontEnd(const AudioFrontEndOptions& o) {
  const int64_t bins = o.n_fft / 2 + 1;
  ir::GraphBuilder b(13);
  Value* audio = b.Input("audio", DataType::kFloat32,
                         Shape({Dim::Symbolic("batch"), Dim::Known(1), Dim::Symbolic("samples")}));
  Value* filters = b.Initializer("stft_filters", StftFilters(o.n_fft));
  Value* spectrum =
      b.Op("Conv", {audio, filters},
           {Attribute::Ints("kernel_shape", {o.n_fft}), Attribute::Ints("strides", {o.hop}),
            Attribute::Ints("pads", {o.n_fft / 2, o.n_fft / 2})});
  Value* split = b.Initializer("split", Tensor::FromVector<int64_t>({2}, {bins, bins}));
  std::vector<Value*> parts = b.MultiOp("Split", {spectrum, split}, 2, {Attribute::Int("axis", 1)});
  Value* power =
      b.Op("Add", {b.Op("Mul", {parts[0], parts[0]}), b.Op("Mul", {parts[1], parts[1]})});
  Value* frames = b.Op("Transpose", {power}, {Attribute::Ints("perm", {0, 2, 1})});
  Value* mel = b.Op("MatMul", {frames, b.Initializer("mel_matrix", MelMatrix(bins, o.mels))});
  Value* eps = b.Initializer("eps", Tensor::FromVector<float>({}, {1e-6f}));
  b.Output(b.Op("Log", {b.Op("Add", {mel, eps})}, {}, {"log", {"logmel"}, ""}));
  return b.Build();
}

std::unique_ptr<ir::Graph> BuildVitBlock(const VitBlockOptions& o) {
  ir::GraphBuilder b(13);
  EncoderBuilder e(b, o.seed);
  const int64_t head_size = o.hidden / o.heads;
  Value* x = b.Input("x", DataType::kFloat32,
                     Shape({Dim::Symbolic("batch"), Dim::Known(o.tokens), Dim::Known(o.hidden)}));
  // Attention over one fused QKV projection.
  Value* qkv = e.Linear(e.LayerNorm(x, o.hidden, 13, false), o.hidden, 3 * o.hidden);
  Value* sizes = e.Int64s({o.hidden, o.hidden, o.hidden});
  std::vector<Value*> qkv_parts = b.MultiOp("Split", {qkv, sizes}, 3, {Attribute::Int("axis", -1)});
  auto heads = [&](Value* v, std::vector<int64_t> perm) {
    Value* r = b.Op("Reshape", {v, e.Int64s({0, 0, o.heads, head_size})});
    return b.Op("Transpose", {r}, {Attribute::Ints("perm", perm)});
  };
  Value* q = heads(qkv_parts[0], {0, 2, 1, 3});
  Value* k = heads(qkv_parts[1], {0, 2, 3, 1});
  Value* v = heads(qkv_parts[2], {0, 2, 1, 3});
  Value* scores =
      b.Op("Mul", {b.Op("MatMul", {q, k}), e.Scalar(1.0f / std::sqrt(float(head_size)))});
  Value* probs = b.Op("Softmax", {scores}, {Attribute::Int("axis", -1)});
  Value* context =
      b.Op("Transpose", {b.Op("MatMul", {probs, v})}, {Attribute::Ints("perm", {0, 2, 1, 3})});
  Value* merged = b.Op("Reshape", {context, e.Int64s({0, 0, o.hidden})});
  Value* h = b.Op("Add", {x, e.Linear(merged, o.hidden, o.hidden)});
  // MLP.
  Value* mlp = e.Linear(e.Gelu(e.Linear(e.LayerNorm(h, o.hidden, 13, false), o.hidden, o.mlp),
                               GeluForm::kHalfXTimesErf),
                        o.mlp, o.hidden);
  Value* y = b.Op("Add", {h, mlp});
  // Mean over tokens, classifier.
  Value* pooled =
      b.Op("ReduceMean", {y}, {Attribute::Ints("axes", {1}), Attribute::Int("keepdims", 1)});
  Value* flat = b.Op("Squeeze", {pooled, e.Int64s({1})});
  Value* logits = b.Op("MatMul", {flat, e.Random({o.hidden, o.classes}, 0.1f)}, {},
                       {"classifier", {"logits"}, ""});
  b.Output(logits);
  return b.Build();
}

}  // namespace qtune::testing
