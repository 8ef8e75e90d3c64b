#include "runtime/reference/nn_rnn.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "runtime/reference/nn_util.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::nn::rnn {
namespace {

struct ActivationInfo {
  const char* name;  // lower case
  ActivationKind kind;
  bool takes_alpha, takes_beta;
  double default_alpha, default_beta;
};

// ONNX Runtime's table (rnn_helpers.cc): which functions read alpha/beta and their defaults.
constexpr ActivationInfo kActivations[] = {
    {"relu", ActivationKind::kRelu, false, false, 0, 0},
    {"tanh", ActivationKind::kTanh, false, false, 0, 0},
    {"sigmoid", ActivationKind::kSigmoid, false, false, 0, 0},
    {"affine", ActivationKind::kAffine, true, true, 1, 0},
    {"leakyrelu", ActivationKind::kLeakyRelu, true, false, 0.01, 0},
    {"thresholdedrelu", ActivationKind::kThresholdedRelu, true, false, 1, 0},
    {"scaledtanh", ActivationKind::kScaledTanh, true, true, 1, 1},
    {"hardsigmoid", ActivationKind::kHardSigmoid, true, true, 0.2, 0.5},
    {"elu", ActivationKind::kElu, true, false, 1, 0},
    {"softsign", ActivationKind::kSoftsign, false, false, 0, 0},
    {"softplus", ActivationKind::kSoftplus, false, false, 0, 0},
};

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Loads a whole tensor as doubles.
std::vector<double> Load(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = reference::LoadAsDouble(t, i);
  return v;
}

Status CheckSizes(const ir::Node& node, const Tensor& t, std::string_view name,
                  const std::vector<int64_t>& expected) {
  if (t.sizes() == expected) return Status::Ok();
  return NodeInvalid(node, "input " + std::string(name) + " has sizes " + SizesText(t.sizes()) +
                               ", expected " + SizesText(expected));
}

// A state input ([dirs, batch, hidden], or [batch, dirs, hidden] in layout 1) as
// [dirs, batch, hidden] doubles; zeros when absent.
StatusOr<std::vector<double>> LoadState(const KernelArgs& args, size_t index, std::string_view name,
                                        const RnnProblem& p) {
  const int64_t count = p.directions * p.batch * p.hidden;
  const Tensor* t = OptionalInput(args, index);
  if (t == nullptr) return std::vector<double>(static_cast<size_t>(count), 0.0);
  std::vector<int64_t> expected = p.batch_major
                                      ? std::vector<int64_t>{p.batch, p.directions, p.hidden}
                                      : std::vector<int64_t>{p.directions, p.batch, p.hidden};
  RETURN_IF_ERROR(CheckSizes(args.node, *t, name, expected));
  std::vector<double> raw = Load(*t);
  if (!p.batch_major) return raw;
  std::vector<double> state(raw.size());
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t d = 0; d < p.directions; ++d) {
      std::copy_n(&raw[(b * p.directions + d) * p.hidden], p.hidden,
                  &state[(d * p.batch + b) * p.hidden]);
    }
  }
  return state;
}

StatusOr<RnnProblem> ReadProblem(const KernelArgs& args, const CellSpec& spec) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(args, 0, "X"));
  ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(args, 1, "W"));
  ASSIGN_OR_RETURN(const Tensor* r, RequiredInput(args, 2, "R"));
  if (x->dtype() != DataType::kFloat32 && x->dtype() != DataType::kFloat64 &&
      !reference::IsNarrowFloat(x->dtype())) {
    return NodeUnimplemented(node, "input X is " + x->DebugString() +
                                       "; the reference kernel takes floating-point types");
  }
  RETURN_IF_ERROR(CheckSameType(node, *x, "X", *w, "W"));
  RETURN_IF_ERROR(CheckSameType(node, *x, "X", *r, "R"));
  if (x->rank() != 3 || w->rank() != 3 || r->rank() != 3) {
    return NodeInvalid(node, "X, W and R must have rank 3 (got " + SizesText(x->sizes()) + ", " +
                                 SizesText(w->sizes()) + ", " + SizesText(r->sizes()) + ")");
  }
  RnnProblem p;
  p.gates = spec.gates;
  p.batch_major = args.opset >= 14 && node.GetInt("layout", 0) != 0;
  const std::string direction = node.GetString("direction", "forward");
  if (direction == "forward" || direction == "reverse") {
    p.directions = 1;
    p.reverse_only = direction == "reverse";
  } else if (direction == "bidirectional") {
    p.directions = 2;
  } else {
    return NodeInvalid(
        node, "direction '" + direction + "' is not one of forward, reverse, bidirectional");
  }
  p.seq = x->size(p.batch_major ? 1 : 0);
  p.batch = x->size(p.batch_major ? 0 : 1);
  p.input = x->size(2);
  p.hidden = node.GetInt("hidden_size", r->size(2));
  if (p.hidden <= 0) return NodeInvalid(node, "hidden_size must be positive");
  const int64_t gh = spec.gates * p.hidden;
  RETURN_IF_ERROR(CheckSizes(node, *w, "W", {p.directions, gh, p.input}));
  RETURN_IF_ERROR(CheckSizes(node, *r, "R", {p.directions, gh, p.hidden}));
  p.x = Load(*x);
  p.w = Load(*w);
  p.r = Load(*r);
  if (const Tensor* b = OptionalInput(args, 3)) {
    RETURN_IF_ERROR(CheckSizes(node, *b, "B", {p.directions, 2 * gh}));
    p.b = Load(*b);
  } else {
    p.b.assign(static_cast<size_t>(p.directions * 2 * gh), 0.0);
  }
  p.lens.assign(static_cast<size_t>(p.batch), p.seq);
  if (const Tensor* lens = OptionalInput(args, 4)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> values,
                     reference::ReadIndices(node, *lens, "sequence_lens"));
    if (static_cast<int64_t>(values.size()) != p.batch) {
      return NodeInvalid(node, "sequence_lens has " + std::to_string(values.size()) +
                                   " values for a batch of " + std::to_string(p.batch));
    }
    for (int64_t len : values) {
      if (len < 0 || len > p.seq) {
        return NodeInvalid(node, "sequence_lens value " + std::to_string(len) + " is outside [0, " +
                                     std::to_string(p.seq) + "]");
      }
    }
    p.lens = std::move(values);
  }
  ASSIGN_OR_RETURN(p.h0, LoadState(args, 5, "initial_h", p));
  if (spec.has_cell_state) {
    ASSIGN_OR_RETURN(p.c0, LoadState(args, 6, "initial_c", p));
  }
  if (spec.has_peepholes) {
    if (const Tensor* peep = OptionalInput(args, 7)) {
      RETURN_IF_ERROR(CheckSizes(node, *peep, "P", {p.directions, 3 * p.hidden}));
      p.p = Load(*peep);
    } else {
      p.p.assign(static_cast<size_t>(p.directions * 3 * p.hidden), 0.0);
    }
  }
  p.clip = node.GetFloat("clip", 0.0f);
  if (node.HasAttribute("clip") && !(p.clip > 0)) {
    return NodeInvalid(node, "clip must be positive");
  }
  p.activations_per_direction = static_cast<int64_t>(spec.default_activations.size());
  ASSIGN_OR_RETURN(p.activations, ParseActivations(node, p.directions, spec.default_activations));
  p.input_forget = node.GetInt("input_forget", 0);
  p.linear_before_reset = node.GetInt("linear_before_reset", 0);
  return p;
}

}  // namespace

double Activation::operator()(double x) const {
  switch (kind) {
    case ActivationKind::kRelu:
      return std::max(x, 0.0);
    case ActivationKind::kTanh:
      return std::tanh(x);
    case ActivationKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case ActivationKind::kAffine:
      return alpha * x + beta;
    case ActivationKind::kLeakyRelu:
      return x >= 0 ? x : alpha * x;
    case ActivationKind::kThresholdedRelu:
      return x > alpha ? x : 0.0;
    case ActivationKind::kScaledTanh:
      return alpha * std::tanh(beta * x);
    case ActivationKind::kHardSigmoid:
      return std::clamp(alpha * x + beta, 0.0, 1.0);
    case ActivationKind::kElu:
      return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
    case ActivationKind::kSoftsign:
      return x / (1.0 + std::fabs(x));
    case ActivationKind::kSoftplus:
      return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0);
  }
  return x;
}

StatusOr<std::vector<Activation>> ParseActivations(const ir::Node& node, int64_t directions,
                                                   const std::vector<std::string>& defaults) {
  std::vector<std::string> names;
  if (const ir::Attribute* a = node.FindAttribute("activations"); a != nullptr) {
    names = a->strings;
    const size_t per = defaults.size();
    // One list per direction, forward first (a bidirectional op lists both).
    if (names.size() != per * directions) {
      return NodeInvalid(node, "activations lists " + std::to_string(names.size()) +
                                   " functions; expected " + std::to_string(per * directions));
    }
  } else {
    for (int64_t d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  }
  const std::vector<float> alphas = node.GetFloats("activation_alpha", {});
  const std::vector<float> betas = node.GetFloats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    const std::string lower = Lower(name);
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& candidate : kActivations) {
      if (lower == candidate.name) info = &candidate;
    }
    if (info == nullptr) {
      return NodeUnimplemented(node, "activation '" + name +
                                         "' is not one of Relu, Tanh, Sigmoid, Affine, "
                                         "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, "
                                         "Elu, Softsign, Softplus");
    }
    Activation act{info->kind, info->default_alpha, info->default_beta};
    if (info->takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (info->takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    out.push_back(act);
  }
  return out;
}

double RnnProblem::Clip(double v) const { return clip > 0 ? std::clamp(v, -clip, clip) : v; }

const double* RnnProblem::XAt(int64_t t, int64_t b) const {
  const int64_t row = batch_major ? b * seq + t : t * batch + b;
  return &x[static_cast<size_t>(row * input)];
}

void MatVec(const double* m, int64_t rows, int64_t cols, const double* v, double* out) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += m[r * cols + c] * v[c];
    out[r] = sum;
  }
}

StatusOr<std::vector<Tensor>> RunRecurrent(const KernelArgs& args, const CellSpec& spec,
                                           CellFn cell) {
  ASSIGN_OR_RETURN(RnnProblem p, ReadProblem(args, spec));
  const ir::Node& node = args.node;
  const DataType dtype = args.inputs[0].dtype();
  const int64_t h_size = p.hidden;
  // Y in [seq, dirs, batch, hidden] order (transposed at the store for layout 1).
  std::vector<double> y(static_cast<size_t>(p.seq * p.directions * p.batch * h_size), 0.0);
  std::vector<double> y_h = p.h0, y_c = p.c0;
  std::vector<double> h(h_size), c(h_size), h_next(h_size), c_next(h_size);
  for (int64_t dir = 0; dir < p.directions; ++dir) {
    const bool reverse = p.reverse_only || dir == 1;
    for (int64_t b = 0; b < p.batch; ++b) {
      const size_t state = static_cast<size_t>((dir * p.batch + b) * h_size);
      std::copy_n(&p.h0[state], h_size, h.begin());
      if (spec.has_cell_state) std::copy_n(&p.c0[state], h_size, c.begin());
      const int64_t len = p.lens[b];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        cell(p, dir, p.XAt(t, b), h.data(), c.data(), h_next.data(), c_next.data());
        std::swap(h, h_next);
        std::swap(c, c_next);
        std::copy(h.begin(), h.end(), &y[((t * p.directions + dir) * p.batch + b) * h_size]);
      }
      // A row that runs no step has zero final states, as in ONNX Runtime.
      if (len == 0) {
        std::fill(h.begin(), h.end(), 0.0);
        std::fill(c.begin(), c.end(), 0.0);
      }
      std::copy(h.begin(), h.end(), &y_h[state]);
      if (spec.has_cell_state) std::copy(c.begin(), c.end(), &y_c[state]);
    }
  }

  std::vector<Tensor> outputs(node.num_outputs());
  if (OutputRequested(node, 0)) {
    std::vector<int64_t> sizes = p.batch_major
                                     ? std::vector<int64_t>{p.batch, p.seq, p.directions, h_size}
                                     : std::vector<int64_t>{p.seq, p.directions, p.batch, h_size};
    ASSIGN_OR_RETURN(outputs[0], Tensor::Allocate(dtype, sizes));
    int64_t i = 0;
    for (int64_t t = 0; t < p.seq; ++t) {
      for (int64_t d = 0; d < p.directions; ++d) {
        for (int64_t b = 0; b < p.batch; ++b) {
          const int64_t dst_row = p.batch_major ? (b * p.seq + t) * p.directions + d
                                                : (t * p.directions + d) * p.batch + b;
          for (int64_t k = 0; k < h_size; ++k, ++i) {
            reference::StoreFromDouble(outputs[0], dst_row * h_size + k, y[i]);
          }
        }
      }
    }
  }
  const std::vector<double>* states[] = {&y_h, &y_c};
  for (size_t o = 1; o < 3 && o < node.num_outputs(); ++o) {
    if (!OutputRequested(node, o)) continue;
    if (o == 2 && !spec.has_cell_state) {
      return NodeInvalid(node, "has a third output; only LSTM has one (Y_c)");
    }
    std::vector<int64_t> sizes = p.batch_major
                                     ? std::vector<int64_t>{p.batch, p.directions, h_size}
                                     : std::vector<int64_t>{p.directions, p.batch, h_size};
    ASSIGN_OR_RETURN(outputs[o], Tensor::Allocate(dtype, sizes));
    const std::vector<double>& src = *states[o - 1];
    for (int64_t d = 0; d < p.directions; ++d) {
      for (int64_t b = 0; b < p.batch; ++b) {
        const int64_t dst_row = p.batch_major ? b * p.directions + d : d * p.batch + b;
        for (int64_t k = 0; k < h_size; ++k) {
          reference::StoreFromDouble(outputs[o], dst_row * h_size + k,
                                     src[(d * p.batch + b) * h_size + k]);
        }
      }
    }
  }
  return outputs;
}

}  // namespace qtune::runtime::nn::rnn
