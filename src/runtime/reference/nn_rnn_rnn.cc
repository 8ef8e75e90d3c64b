// RNN (ONNX opsets 7..22), the plain recurrent cell with one activation f per direction
// (default Tanh):
//   H = f(Wi x + Ri h + Wbi + Rbi)
// clip clamps the pre-activation.
#include "runtime/reference/nn_rnn.h"

#include <vector>

#include "runtime/reference/nn_kernels.h"

namespace qtune::runtime::nn {
namespace {

void RnnCell(const rnn::RnnProblem& p, int64_t dir, const double* x, const double* h_prev,
             const double* /*c_prev*/, double* h, double* /*c*/) {
  const int64_t hs = p.hidden;
  std::vector<double> gx(hs), gr(hs);
  rnn::MatVec(&p.w[dir * hs * p.input], hs, p.input, x, gx.data());
  rnn::MatVec(&p.r[dir * hs * hs], hs, hs, h_prev, gr.data());
  const double* wb = &p.b[dir * 2 * hs];
  const double* rb = wb + hs;
  const rnn::Activation& f = p.act(dir, 0);
  for (int64_t k = 0; k < hs; ++k) h[k] = f(p.Clip(gx[k] + gr[k] + wb[k] + rb[k]));
}

}  // namespace

KernelResult Rnn(const KernelArgs& args) {
  static const rnn::CellSpec kSpec{.gates = 1, .default_activations = {"Tanh"}};
  return rnn::RunRecurrent(args, kSpec, &RnnCell);
}

}  // namespace qtune::runtime::nn
