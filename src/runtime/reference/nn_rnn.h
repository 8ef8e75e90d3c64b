// Shared parts of the reference recurrent kernels LSTM, GRU and RNN (nn_rnn_*.cc): the
// attributes every one of them has, the activation functions, and the time loop. Each op
// supplies only its cell (one time step for one batch row and one direction).
//
// The reference computes in double: it loads every input once, runs the loop and stores
// the outputs in the input's type (float16 and bfloat16 round at the store).
//
// ONNX semantics followed here (operators LSTM/GRU/RNN, opsets 7..22):
//   - direction forward / reverse / bidirectional (forward first, then reverse);
//   - layout 0: X [seq, batch, input], Y [seq, dirs, batch, hidden], states [dirs, batch,
//     hidden]; layout 1 (opset 14): X [batch, seq, input], Y [batch, seq, dirs, hidden],
//     states [batch, dirs, hidden];
//   - sequence_lens [batch]: a row runs its first len steps (the reverse direction from
//     step len-1 down to 0); Y is zero past len; Y_h / Y_c hold the state after the last
//     step the row ran (zeros when len is 0, as ONNX Runtime gives);
//   - activations / activation_alpha / activation_beta: names case-insensitive, the alpha
//     and beta lists consumed in order by the functions that take them (defaults otherwise),
//     as ONNX Runtime reads them;
//   - clip: the gates' pre-activations are clamped to [-clip, clip].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::nn::rnn {

enum class ActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct Activation {
  ActivationKind kind = ActivationKind::kTanh;
  double alpha = 0;
  double beta = 0;
  double operator()(double x) const;
};

// Parses `activations` (with alpha/beta) for `per_direction` functions per direction; the
// defaults when the attribute is absent. InvalidArgument naming the node for an unknown
// name or a list of the wrong length.
StatusOr<std::vector<Activation>> ParseActivations(const ir::Node& node, int64_t directions,
                                                   const std::vector<std::string>& defaults);

// What the op is: LSTM has 4 gates and a cell state, GRU 3, RNN 1.
struct CellSpec {
  int64_t gates = 1;
  std::vector<std::string> default_activations;  // per direction
  bool has_cell_state = false;                   // LSTM: initial_c input 6, Y_c output 2
  bool has_peepholes = false;                    // LSTM: P input 7
};

// Every input as doubles, already in ONNX's weight layout (W [dirs, G*H, I], R [dirs, G*H,
// H], B [dirs, 2*G*H] zero when absent). States are stored [dirs, batch, hidden] whatever
// the layout.
struct RnnProblem {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, gates = 1;
  bool batch_major = false;  // layout 1
  bool reverse_only = false;
  double clip = 0;  // <= 0: no clipping
  std::vector<double> x, w, r, b, h0, c0, p;
  std::vector<int64_t> lens;            // per batch row
  std::vector<Activation> activations;  // directions * per-direction count
  int64_t activations_per_direction = 1;
  int64_t input_forget = 0;         // LSTM
  int64_t linear_before_reset = 0;  // GRU

  const Activation& act(int64_t dir, int64_t k) const {
    return activations[dir * activations_per_direction + k];
  }
  double Clip(double v) const;
  // X row for time step t, batch row b (input values).
  const double* XAt(int64_t t, int64_t b) const;
};

// One step of one batch row in direction `dir`: reads x (input values), h_prev and c_prev
// (hidden values; c only for LSTM) and writes h and c.
using CellFn = void (*)(const RnnProblem& p, int64_t dir, const double* x, const double* h_prev,
                        const double* c_prev, double* h, double* c);

// Reads inputs and attributes, runs the loop, allocates and fills the requested outputs.
StatusOr<std::vector<Tensor>> RunRecurrent(const KernelArgs& args, const CellSpec& spec,
                                           CellFn cell);

// out[r] = sum_c m[r * cols + c] * v[c] for r < rows (a row-major matrix times a vector).
void MatVec(const double* m, int64_t rows, int64_t cols, const double* v, double* out);

}  // namespace qtune::runtime::nn::rnn
