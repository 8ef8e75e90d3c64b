// LSTM (ONNX opsets 7..22). Gates in ONNX order i, o, f, c (W, R, B); peepholes P in order
// i, o, f. Activations f, g, h per direction (default Sigmoid, Tanh, Tanh):
//   i = f(Wi x + Ri h + Pi * c_prev + Wbi + Rbi)
//   f = f(Wf x + Rf h + Pf * c_prev + Wbf + Rbf)      (1 - i with input_forget, as ORT)
//   c~ = g(Wc x + Rc h + Wbc + Rbc)
//   C = f * c_prev + i * c~
//   o = f(Wo x + Ro h + Po * C + Wbo + Rbo)
//   H = o * h(C)
// clip clamps each gate's pre-activation (peephole term included).
#include <vector>

#include "runtime/reference/nn_kernels.h"
#include "runtime/reference/nn_rnn.h"

namespace qtune::runtime::nn {
namespace {

void LstmCell(const rnn::RnnProblem& p, int64_t dir, const double* x, const double* h_prev,
              const double* c_prev, double* h, double* c) {
  const int64_t hs = p.hidden, gh = 4 * hs;
  std::vector<double> gx(gh), gr(gh);
  rnn::MatVec(&p.w[dir * gh * p.input], gh, p.input, x, gx.data());
  rnn::MatVec(&p.r[dir * gh * hs], gh, hs, h_prev, gr.data());
  const double* wb = &p.b[dir * 2 * gh];
  const double* rb = wb + gh;
  const double* peep = &p.p[dir * 3 * hs];
  auto pre = [&](int64_t gate, int64_t k) {
    const int64_t j = gate * hs + k;
    return gx[j] + gr[j] + wb[j] + rb[j];
  };
  const rnn::Activation& f = p.act(dir, 0);
  const rnn::Activation& g = p.act(dir, 1);
  const rnn::Activation& h_act = p.act(dir, 2);
  for (int64_t k = 0; k < hs; ++k) {
    const double i_gate = f(p.Clip(pre(0, k) + peep[k] * c_prev[k]));
    const double f_gate =
        p.input_forget != 0 ? 1.0 - i_gate : f(p.Clip(pre(2, k) + peep[2 * hs + k] * c_prev[k]));
    const double candidate = g(p.Clip(pre(3, k)));
    c[k] = f_gate * c_prev[k] + i_gate * candidate;
    const double o_gate = f(p.Clip(pre(1, k) + peep[hs + k] * c[k]));
    h[k] = o_gate * h_act(c[k]);
  }
}

}  // namespace

KernelResult Lstm(const KernelArgs& args) {
  static const rnn::CellSpec kSpec{.gates = 4,
                                   .default_activations = {"Sigmoid", "Tanh", "Tanh"},
                                   .has_cell_state = true,
                                   .has_peepholes = true};
  return rnn::RunRecurrent(args, kSpec, &LstmCell);
}

}  // namespace qtune::runtime::nn
