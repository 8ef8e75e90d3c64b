// Two models in the forms exporters write, built with GraphBuilder for the engine-coverage
// tests and benchmarks (issue 16): an audio front end (log-mel spectrogram with the STFT as
// a strided 1-D Conv, opset 13) and a ViT-style encoder block whose attention splits one
// fused QKV projection (Split/Reshape/Transpose), mean-pooled over tokens (ReduceMean).
#pragma once

#include <cstdint>
#include <memory>

#include "ir/graph.h"

namespace qtune::testing {

struct AudioFrontEndOptions {
  int64_t n_fft = 512;  // window length; n_fft / 2 + 1 frequency bins
  int64_t hop = 160;
  int64_t mels = 80;
};

// Input "audio" [batch, 1, samples] (batch and samples symbolic), output "logmel"
// [batch, frames, mels]: Conv1d with a fixed Hann-windowed cosine/sine filter bank
// (stride hop, centered pads) -> Split into real and imaginary parts -> re^2 + im^2 ->
// Transpose -> MatMul with a triangular mel matrix -> Log(x + 1e-6).
std::unique_ptr<ir::Graph> BuildAudioFrontEnd(const AudioFrontEndOptions& options);

struct VitBlockOptions {
  int64_t tokens = 197, hidden = 192, heads = 3, mlp = 768, classes = 10;
  uint64_t seed = 5;
};

// Input "x" [batch, tokens, hidden] (batch symbolic), output "logits" [batch, classes]:
// pre-norm encoder block at opset 13 (decomposed LayerNorm with ReduceMean, one QKV MatMul
// split in three, Reshape/Transpose per head, Softmax, erf GELU MLP, residuals), then
// ReduceMean over tokens (keepdims) -> Squeeze -> classifier MatMul.
std::unique_ptr<ir::Graph> BuildVitBlock(const VitBlockOptions& options);

}  // namespace qtune::testing
