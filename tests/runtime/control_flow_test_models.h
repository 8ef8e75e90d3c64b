// Models with If, Loop and Scan built with the graph builder, for the control-flow tests
// (engine alone and against ONNX Runtime). Bodies are built as graphs of their own whose
// trailing inputs stand for outer-scope values (ir::SubgraphAttribute).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::testing {

// A voice-activity-style model (Silero-VAD-like), opset 16. Inputs: x [1, N] float (N a
// multiple of 8), sr int64 scalar, state [2, 1, 128] float. An If on sr == 16000 picks the
// front end (then: Conv k16 s8 p4 with its weights inside the branch; else: Conv k8 s8
// with its projection read from outer-scope initializers), both giving a [1, 128]
// feature; an LSTM cell built from MatMul/Sigmoid/Tanh consumes and produces the state.
// Outputs: prob [1, 1], stateN [2, 1, 128].
std::unique_ptr<ir::Graph> BuildVadModel(uint64_t seed = 7);

// Loop accumulating an outer value: inputs x [3] float (and M int64 scalar when
// `runtime_trip`; else M = 5 is a constant). Body: y += x; scan output y * iteration.
// Outputs: y [3], scan [M, 3].
std::unique_ptr<ir::Graph> BuildLoopAccumulate(bool runtime_trip);

// Loop with a run-time trip count and a condition computed by the body: inputs M int64
// scalar, limit float [1]. Body: s += 1.5, continue while s < limit. Output: s [1].
std::unique_ptr<ir::Graph> BuildLoopUntil();

// Loop whose carried value grows each iteration: v [1 + t, 2] -> Concat(v, v[0:1] + t).
// Input v0 [1, 2] float; M = 4 constant unless `runtime_trip` (then an int64 input M).
// Output: v [5, 2].
std::unique_ptr<ir::Graph> BuildLoopGrowing(bool runtime_trip);

// If inside a Loop body: for 4 iterations, acc += iteration even ? x * scale : -x, where
// scale is read two scopes up. Inputs x [2] float, scale [1] float. Output acc [2].
std::unique_ptr<ir::Graph> BuildLoopWithIf();

// Scan running an RNN cell h = tanh(x_t W + h U) over a sequence: input seq [T, 1, 4]
// (or [1, T, 4] when axis == 1), h0 [1, 8]; `reverse` scans the sequence backwards.
// Outputs: h_final [1, 8], hs (the h of every step stacked along axis 0).
std::unique_ptr<ir::Graph> BuildScanRnn(int64_t axis, bool reverse);

// Uniform(-scale, scale) float32 tensor.
Tensor RandomFloats(const std::vector<int64_t>& sizes, std::mt19937& rng, float scale = 1.0f);

}  // namespace qtune::testing
