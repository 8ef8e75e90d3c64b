// GRU (ONNX opsets 7..22). Gates in ONNX order z, r, h (W, R, B). Activations f, g per
// direction (default Sigmoid, Tanh):
//   z = f(Wz x + Rz h + Wbz + Rbz)
//   r = f(Wr x + Rr h + Wbr + Rbr)
//   h~ = g(Wh x + Rh (r * h) + Rbh + Wbh)        linear_before_reset = 0
//   h~ = g(Wh x + r * (Rh h + Rbh) + Wbh)        linear_before_reset != 0
//   H = (1 - z) * h~ + z * h
// clip clamps each gate's pre-activation.
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_rnn.h"

namespace qtune::runtime::nn {
namespace {

void GruCell(const rnn::RnnProblem& p, int64_t dir, const double* x, const double* h_prev,
             const double* /*c_prev*/, double* h, double* /*c*/) {
  const int64_t hs = p.hidden, gh = 3 * hs;
  std::vector<double> gx(gh), gr(gh);
  const double* r_dir = &p.r[dir * gh * hs];
  rnn::MatVec(&p.w[dir * gh * p.input], gh, p.input, x, gx.data());
  // z and r rows of R times h; the h row depends on linear_before_reset.
  rnn::MatVec(r_dir, 2 * hs, hs, h_prev, gr.data());
  const double* wb = &p.b[dir * 2 * gh];
  const double* rb = wb + gh;
  const rnn::Activation& f = p.act(dir, 0);
  const rnn::Activation& g = p.act(dir, 1);
  std::vector<double> z(hs), r(hs), rh(hs);
  for (int64_t k = 0; k < hs; ++k) {
    z[k] = f(p.Clip(gx[k] + gr[k] + wb[k] + rb[k]));
    r[k] = f(p.Clip(gx[hs + k] + gr[hs + k] + wb[hs + k] + rb[hs + k]));
  }
  std::vector<double> hidden_term(hs);
  if (p.linear_before_reset != 0) {
    rnn::MatVec(r_dir + 2 * hs * hs, hs, hs, h_prev, rh.data());
    for (int64_t k = 0; k < hs; ++k) hidden_term[k] = r[k] * (rh[k] + rb[2 * hs + k]);
  } else {
    std::vector<double> gated(hs);
    for (int64_t k = 0; k < hs; ++k) gated[k] = r[k] * h_prev[k];
    rnn::MatVec(r_dir + 2 * hs * hs, hs, hs, gated.data(), rh.data());
    for (int64_t k = 0; k < hs; ++k) hidden_term[k] = rh[k] + rb[2 * hs + k];
  }
  for (int64_t k = 0; k < hs; ++k) {
    const double candidate = g(p.Clip(gx[2 * hs + k] + wb[2 * hs + k] + hidden_term[k]));
    h[k] = (1.0 - z[k]) * candidate + z[k] * h_prev[k];
  }
}

}  // namespace

KernelResult Gru(const KernelArgs& args) {
  static const rnn::CellSpec kSpec{.gates = 3, .default_activations = {"Sigmoid", "Tanh"}};
  return rnn::RunRecurrent(args, kSpec, &GruCell);
}

}  // namespace qtune::runtime::nn
