// oneDNN fp32 kernels for the recurrent ops:
//   LSTM  lstm_forward (peepholes P as oneDNN's peephole weights)
//   GRU   gru_forward (linear_before_reset 0) or lbr_gru_forward (linear_before_reset 1)
//   RNN   vanilla_rnn_forward (Tanh, Relu or Sigmoid)
// with direction forward / reverse / bidirectional (unidirectional_left2right / right2left /
// bidirectional_concat) and layout 0 or 1.
//
// The primitive, its weights and every memory object are made once, when the plan is
// compiled: W, R, B and P must be constants. They are reordered from ONNX's [dirs, G*H, I]
// (gates LSTM i,o,f,c; GRU z,r,h; peepholes i,o,f) into oneDNN's ldigo (gates LSTM i,f,c,o;
// GRU u,r,o; peepholes i,f,o) and then into the primitive's preferred format.
//
// Not applicable (the reference runs): other types, clip, input_forget, activations other
// than the defaults (RNN: Tanh, Relu, Sigmoid, the same in both directions), a
// sequence_lens that is computed at run time or shorter than the sequence for some row,
// weights computed at run time, empty tensors.
//
// oneDNN's own layouts: X [T,N,C] (layout 1: [N,T,C]), states [1,D,N,H], Y [T,N,D*H]
// (layout 1: [N,T,D*H]). ONNX's Y [T,D,N,H] equals oneDNN's for D = 1 and layout 1 always;
// a bidirectional layout-0 Y, and layout-1 states [N,D,H] with D = 2, are copied through a
// buffer the kernel owns (dims 1 and 2 swapped), except with batch 1, where both orders
// are the same bytes.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

enum class Cell { kLstm, kGru, kLbrGru, kVanilla };

// The sizes and options one primitive is built for.
struct RnnShape {
  Cell cell = Cell::kLstm;
  dnnl::algorithm activation = dnnl::algorithm::eltwise_tanh;  // vanilla RNN only
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batch_major = false;
  dnnl::rnn_direction direction = dnnl::rnn_direction::unidirectional_left2right;
};

// [a, b, c, h] -> [a, c, b, h]: swaps the two middle dimensions of a row-major array.
void SwapMiddle(const float* src, int64_t a, int64_t b, int64_t c, int64_t h, float* dst) {
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) {
      for (int64_t k = 0; k < c; ++k) {
        std::copy_n(src + ((i * b + j) * c + k) * h, h, dst + ((i * c + k) * b + j) * h);
      }
    }
  }
}

// One oneDNN argument bound to a node input or output, directly or through `staging`
// (with dims 1 and 2 of [a, b, c, h] swapped on the way in or out).
struct Binding {
  int arg = 0;
  int index = -1;  // node input (source args) or output (destination args)
  memory::desc desc;
  bool staged = false;
  std::vector<int64_t> onnx_dims;  // [a, b, c, h] of the ONNX tensor when staged
  std::vector<float> staging;
};

class OnednnRnnKernel : public Kernel {
 public:
  OnednnRnnKernel(dnnl::primitive primitive, std::string impl, std::vector<Binding> sources,
                  std::vector<Binding> destinations, std::vector<std::pair<int, memory>> constants)
      : primitive_(std::move(primitive)),
        impl_(std::move(impl)),
        sources_(std::move(sources)),
        destinations_(std::move(destinations)),
        constants_(std::move(constants)) {}

  std::string Describe() const override { return "onednn:" + impl_; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      for (Binding& s : sources_) {
        // index -1: a state the node omits while oneDNN needs it (LSTM's h0 without c0).
        const float* data = s.index < 0 ? s.staging.data() : inputs[s.index].data<float>();
        if (s.staged) {
          const auto& d = s.onnx_dims;
          SwapMiddle(data, d[0], d[1], d[2], d[3], s.staging.data());
          data = s.staging.data();
        }
        args_.Bind(s.arg, s.desc, data);
      }
      for (Binding& d : destinations_) {
        void* data = d.staging.empty() ? outputs[d.index].raw_data() : d.staging.data();
        args_.Bind(d.arg, d.desc, data);
      }
      if (!constants_bound_) {
        for (const auto& [arg, mem] : constants_) args_.Set(arg, mem);
        constants_bound_ = true;
      }
      args_.Execute(primitive_);
      for (Binding& d : destinations_) {
        if (!d.staged || d.index < 0) continue;  // index -1: an output nobody reads
        // The buffer holds oneDNN's order, [a, c, b, h] of the ONNX dims [a, b, c, h].
        const auto& o = d.onnx_dims;
        SwapMiddle(d.staging.data(), o[0], o[2], o[1], o[3], outputs[d.index].data<float>());
      }
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "running " + impl_);
    }
  }

 private:
  dnnl::primitive primitive_;
  std::string impl_;
  std::vector<Binding> sources_, destinations_;
  std::vector<std::pair<int, memory>> constants_;
  bool constants_bound_ = false;
  onednn::ExecArgs args_;
};

memory::desc F32(const std::vector<int64_t>& dims, Tag tag) {
  return memory::desc(onednn::ToDims(dims), memory::data_type::f32, tag);
}

bool IsDefaultDomain(const ir::Node& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The activations as lower-case names, one direction's worth; empty when the two
// directions differ. Absent attribute: `defaults`.
std::vector<std::string> Activations(const ir::Node& node, int64_t dirs,
                                     const std::vector<std::string>& defaults) {
  const ir::Attribute* a = node.FindAttribute("activations");
  if (a == nullptr) return defaults;
  const size_t per = defaults.size();
  if (a->strings.size() != per * static_cast<size_t>(dirs)) return {};
  std::vector<std::string> names;
  for (const std::string& s : a->strings) names.push_back(Lower(s));
  for (size_t i = per; i < names.size(); ++i) {
    if (names[i] != names[i - per]) return {};
  }
  names.resize(per);
  return names;
}

const ValueInfo* Input(const KernelRequest& r, size_t i) {
  return i < r.inputs.size() ? r.inputs[i] : nullptr;
}
bool WantsOutput(const KernelRequest& r, size_t i) {
  return i < r.outputs.size() && r.outputs[i] != nullptr;
}

// ONNX gate g of the op for oneDNN gate k.
int64_t OnnxGate(Cell cell, int64_t k) {
  if (cell == Cell::kLstm) return std::vector<int64_t>{0, 2, 3, 1}[k];  // i,f,c,o <- i,o,f,c
  return k;                                                             // GRU u,r,o = z,r,h
}

int64_t GateCount(Cell cell) { return cell == Cell::kLstm ? 4 : (cell == Cell::kVanilla ? 1 : 3); }

// ONNX W [D, G*H, cols] -> oneDNN ldigo [1, D, cols, G, H], gates in oneDNN's order.
Tensor PackWeights(const RnnShape& s, const Tensor& w, int64_t cols) {
  const int64_t g_count = GateCount(s.cell), h = s.hidden;
  std::vector<float> packed(static_cast<size_t>(s.dirs * cols * g_count * h));
  const float* src = w.data<float>();
  for (int64_t d = 0; d < s.dirs; ++d) {
    for (int64_t k = 0; k < g_count; ++k) {
      const int64_t g = OnnxGate(s.cell, k);
      for (int64_t j = 0; j < h; ++j) {
        for (int64_t c = 0; c < cols; ++c) {
          packed[((d * cols + c) * g_count + k) * h + j] =
              src[(d * g_count * h + g * h + j) * cols + c];
        }
      }
    }
  }
  return Tensor::FromVector<float>({1, s.dirs, cols, g_count, h}, packed);
}

// ONNX B [D, 2*G*H] (Wb then Rb) -> oneDNN ldgo [1, D, Gb, H]: Wb + Rb per gate; LBR GRU
// keeps the candidate's Rb apart as a fourth gate.
Tensor PackBias(const RnnShape& s, const Tensor* b) {
  const int64_t g_count = GateCount(s.cell), h = s.hidden;
  const int64_t gb = s.cell == Cell::kLbrGru ? 4 : g_count;
  std::vector<float> packed(static_cast<size_t>(s.dirs * gb * h), 0.0f);
  if (b != nullptr) {
    const float* src = b->data<float>();
    for (int64_t d = 0; d < s.dirs; ++d) {
      const float* wb = src + d * 2 * g_count * h;
      const float* rb = wb + g_count * h;
      for (int64_t k = 0; k < g_count; ++k) {
        const int64_t g = OnnxGate(s.cell, k);
        const bool split = s.cell == Cell::kLbrGru && k == 2;
        for (int64_t j = 0; j < h; ++j) {
          packed[(d * gb + k) * h + j] = wb[g * h + j] + (split ? 0.0f : rb[g * h + j]);
          if (split) packed[(d * gb + 3) * h + j] = rb[g * h + j];
        }
      }
    }
  }
  return Tensor::FromVector<float>({1, s.dirs, gb, h}, packed);
}

// ONNX P [D, 3*H] (i, o, f) -> oneDNN ldgo [1, D, 3, H] (i, f, o).
Tensor PackPeepholes(const RnnShape& s, const Tensor& p) {
  const int64_t h = s.hidden;
  const int64_t onnx_gate[3] = {0, 2, 1};
  std::vector<float> packed(static_cast<size_t>(s.dirs * 3 * h));
  const float* src = p.data<float>();
  for (int64_t d = 0; d < s.dirs; ++d) {
    for (int64_t k = 0; k < 3; ++k) {
      std::copy_n(src + (d * 3 + onnx_gate[k]) * h, h, &packed[(d * 3 + k) * h]);
    }
  }
  return Tensor::FromVector<float>({1, s.dirs, 3, h}, packed);
}

// Reads the node's attributes into `shape`; false when the fast kernel does not apply.
bool ReadShape(const KernelRequest& r, RnnShape* s) {
  const ir::Node& node = r.node;
  const std::string& op = node.op_type();
  if (op == "LSTM") {
    s->cell = Cell::kLstm;
  } else if (op == "GRU") {
    s->cell = node.GetInt("linear_before_reset", 0) != 0 ? Cell::kLbrGru : Cell::kGru;
  } else if (op == "RNN") {
    s->cell = Cell::kVanilla;
  } else {
    return false;
  }
  if (node.HasAttribute("clip") || node.GetInt("input_forget", 0) != 0) return false;
  const std::string direction = node.GetString("direction", "forward");
  if (direction == "forward") {
    s->direction = dnnl::rnn_direction::unidirectional_left2right;
  } else if (direction == "reverse") {
    s->direction = dnnl::rnn_direction::unidirectional_right2left;
  } else if (direction == "bidirectional") {
    s->direction = dnnl::rnn_direction::bidirectional_concat;
    s->dirs = 2;
  } else {
    return false;
  }
  const ValueInfo* x = Input(r, 0);
  const ValueInfo* w = Input(r, 1);
  const ValueInfo* rr = Input(r, 2);
  if (x == nullptr || w == nullptr || rr == nullptr || x->sizes.size() != 3 ||
      rr->sizes.size() != 3 || w->sizes.size() != 3) {
    return false;
  }
  s->batch_major = r.opset >= 14 && node.GetInt("layout", 0) != 0;
  s->seq = x->sizes[s->batch_major ? 1 : 0];
  s->batch = x->sizes[s->batch_major ? 0 : 1];
  s->input = x->sizes[2];
  s->hidden = node.GetInt("hidden_size", rr->sizes[2]);
  const int64_t gh = GateCount(s->cell) * s->hidden;
  if (s->seq <= 0 || s->batch <= 0 || s->input <= 0 || s->hidden <= 0) return false;
  if (w->sizes != std::vector<int64_t>{s->dirs, gh, s->input} ||
      rr->sizes != std::vector<int64_t>{s->dirs, gh, s->hidden}) {
    return false;  // the reference reports the mismatch
  }
  switch (s->cell) {
    case Cell::kLstm:
      return Activations(node, s->dirs, {"sigmoid", "tanh", "tanh"}) ==
             std::vector<std::string>{"sigmoid", "tanh", "tanh"};
    case Cell::kGru:
    case Cell::kLbrGru:
      return Activations(node, s->dirs, {"sigmoid", "tanh"}) ==
             std::vector<std::string>{"sigmoid", "tanh"};
    case Cell::kVanilla: {
      std::vector<std::string> act = Activations(node, s->dirs, {"tanh"});
      if (act == std::vector<std::string>{"tanh"}) {
        s->activation = dnnl::algorithm::eltwise_tanh;
      } else if (act == std::vector<std::string>{"relu"}) {
        s->activation = dnnl::algorithm::eltwise_relu;
      } else if (act == std::vector<std::string>{"sigmoid"}) {
        s->activation = dnnl::algorithm::eltwise_logistic;
      } else {
        return false;
      }
      return true;
    }
  }
  return false;
}

// True when every input the primitive bakes in is a float32 constant and the run-time
// inputs are float32 of the expected sizes.
bool InputsFit(const KernelRequest& r, const RnnShape& s) {
  for (size_t i : {size_t{1}, size_t{2}, size_t{3}, size_t{7}}) {
    const ValueInfo* v = Input(r, i);
    if (v == nullptr) continue;
    if (!v->has_constant() || v->dtype != DataType::kFloat32) return false;
  }
  if (Input(r, 0)->dtype != DataType::kFloat32) return false;
  const int64_t gh = GateCount(s.cell) * s.hidden;
  if (const ValueInfo* b = Input(r, 3);
      b != nullptr && b->sizes != std::vector<int64_t>{s.dirs, 2 * gh}) {
    return false;
  }
  if (const ValueInfo* p = Input(r, 7);
      p != nullptr &&
      (s.cell != Cell::kLstm || p->sizes != std::vector<int64_t>{s.dirs, 3 * s.hidden})) {
    return false;
  }
  if (const ValueInfo* lens = Input(r, 4); lens != nullptr) {
    if (!lens->has_constant() || lens->constant.num_elements() != s.batch) return false;
    for (int64_t i = 0; i < s.batch; ++i) {
      const int64_t len =
          lens->constant.dtype() == DataType::kInt32
              ? lens->constant.data<int32_t>()[i]
              : (lens->constant.dtype() == DataType::kInt64 ? lens->constant.data<int64_t>()[i]
                                                            : -1);
      if (len != s.seq) return false;
    }
  }
  const std::vector<int64_t> state = s.batch_major
                                         ? std::vector<int64_t>{s.batch, s.dirs, s.hidden}
                                         : std::vector<int64_t>{s.dirs, s.batch, s.hidden};
  for (size_t i : {size_t{5}, size_t{6}}) {
    const ValueInfo* v = Input(r, i);
    if (v == nullptr) continue;
    if (v->dtype != DataType::kFloat32 || v->sizes != state) return false;
    if (i == 6 && s.cell != Cell::kLstm) return false;
  }
  return !(WantsOutput(r, 2) && s.cell != Cell::kLstm);
}

// A state argument ([1, D, N, H] for oneDNN) bound to node input/output `index`; through
// a staging buffer when layout 1 stores it [N, D, H] with D = 2. `index` -1: a buffer the
// kernel owns, zeros for a source, unread for a destination (oneDNN's LSTM takes h and c
// both or neither).
Binding StateBinding(const RnnShape& s, int arg, int index) {
  Binding b{arg, index, F32({1, s.dirs, s.batch, s.hidden}, Tag::ldnc), false, {}, {}};
  if (index < 0 || (s.batch_major && s.dirs == 2 && s.batch > 1)) {
    b.staged = index >= 0;
    b.onnx_dims = {1, s.batch, s.dirs, s.hidden};
    b.staging.assign(static_cast<size_t>(s.batch * s.dirs * s.hidden), 0.0f);
  }
  return b;
}

StatusOr<std::optional<KernelChoice>> Create(const KernelRequest& r) {
  const ir::Node& node = r.node;
  if (!IsDefaultDomain(node)) return NotApplicable();
  RnnShape s;
  if (!ReadShape(r, &s) || !InputsFit(r, s)) return NotApplicable();
  onednn::SetThreads(r.threads);
  const bool lstm = s.cell == Cell::kLstm;
  bool has_h0 = Input(r, 5) != nullptr, has_c0 = lstm && Input(r, 6) != nullptr;
  bool want_h = WantsOutput(r, 1), want_c = lstm && WantsOutput(r, 2);
  // oneDNN's LSTM takes both states or neither (the missing one: a kernel-owned buffer).
  const int h0_index = has_h0 ? 5 : -1, c0_index = has_c0 ? 6 : -1;
  const int h_out_index = want_h ? 1 : -1, c_out_index = want_c ? 2 : -1;
  if (lstm) {
    has_h0 = has_c0 = has_h0 || has_c0;
    want_h = want_c = want_h || want_c;
  }
  const bool has_peepholes = lstm && Input(r, 7) != nullptr;
  const int64_t g_count = GateCount(s.cell);
  const int64_t gb = s.cell == Cell::kLbrGru ? 4 : g_count;

  const Tag layer_tag = s.batch_major ? Tag::ntc : Tag::tnc;
  const std::vector<int64_t> src_dims = {s.seq, s.batch, s.input};
  const std::vector<int64_t> dst_dims = {s.seq, s.batch, s.dirs * s.hidden};
  memory::desc src_layer = F32(src_dims, layer_tag), dst_layer = F32(dst_dims, layer_tag);
  memory::desc state = F32({1, s.dirs, s.batch, s.hidden}, Tag::ldnc);
  memory::desc none;
  memory::desc w_any = F32({1, s.dirs, s.input, g_count, s.hidden}, Tag::any);
  memory::desc r_any = F32({1, s.dirs, s.hidden, g_count, s.hidden}, Tag::any);
  memory::desc bias = F32({1, s.dirs, gb, s.hidden}, Tag::ldgo);
  memory::desc peep = F32({1, s.dirs, 3, s.hidden}, Tag::ldgo);
  const auto inference = dnnl::prop_kind::forward_inference;
  // Each primitive's descriptors; the weights formats are oneDNN's choice.
  dnnl::primitive primitive;
  memory::desc w_md, r_md;
  std::string impl;
  const memory::desc& h0 = has_h0 ? state : none;
  const memory::desc& h_out = want_h ? state : none;
  switch (s.cell) {
    case Cell::kLstm: {
      const memory::desc& c0 = has_c0 ? state : none;
      const memory::desc& c_out = want_c ? state : none;
      auto desc = has_peepholes
                      ? dnnl::lstm_forward::desc(inference, s.direction, src_layer, h0, c0, w_any,
                                                 r_any, peep, bias, dst_layer, h_out, c_out)
                      : dnnl::lstm_forward::desc(inference, s.direction, src_layer, h0, c0, w_any,
                                                 r_any, bias, dst_layer, h_out, c_out);
      dnnl::lstm_forward::primitive_desc pd(desc, onednn::Engine());
      w_md = pd.weights_layer_desc();
      r_md = pd.weights_iter_desc();
      impl = "lstm:" + onednn::ImplName(pd);
      primitive = dnnl::lstm_forward(pd);
      break;
    }
    case Cell::kGru: {
      dnnl::gru_forward::desc desc(inference, s.direction, src_layer, h0, w_any, r_any, bias,
                                   dst_layer, h_out);
      dnnl::gru_forward::primitive_desc pd(desc, onednn::Engine());
      w_md = pd.weights_layer_desc();
      r_md = pd.weights_iter_desc();
      impl = "gru:" + onednn::ImplName(pd);
      primitive = dnnl::gru_forward(pd);
      break;
    }
    case Cell::kLbrGru: {
      dnnl::lbr_gru_forward::desc desc(inference, s.direction, src_layer, h0, w_any, r_any, bias,
                                       dst_layer, h_out);
      dnnl::lbr_gru_forward::primitive_desc pd(desc, onednn::Engine());
      w_md = pd.weights_layer_desc();
      r_md = pd.weights_iter_desc();
      impl = "lbr_gru:" + onednn::ImplName(pd);
      primitive = dnnl::lbr_gru_forward(pd);
      break;
    }
    case Cell::kVanilla: {
      dnnl::vanilla_rnn_forward::desc desc(inference, s.activation, s.direction, src_layer, h0,
                                           w_any, r_any, bias, dst_layer, h_out);
      dnnl::vanilla_rnn_forward::primitive_desc pd(desc, onednn::Engine());
      w_md = pd.weights_layer_desc();
      r_md = pd.weights_iter_desc();
      impl = "rnn:" + onednn::ImplName(pd);
      primitive = dnnl::vanilla_rnn_forward(pd);
      break;
    }
  }

  // Constants, reordered once.
  std::vector<std::pair<int, memory>> constants;
  Tensor w_plain = PackWeights(s, Input(r, 1)->constant, s.input);
  Tensor r_plain = PackWeights(s, Input(r, 2)->constant, s.hidden);
  const std::vector<int64_t> w_dims = {1, s.dirs, s.input, g_count, s.hidden};
  const std::vector<int64_t> r_dims = {1, s.dirs, s.hidden, g_count, s.hidden};
  ASSIGN_OR_RETURN(memory w_mem, onednn::ReorderConstant(w_plain, F32(w_dims, Tag::ldigo), w_md));
  ASSIGN_OR_RETURN(memory r_mem, onednn::ReorderConstant(r_plain, F32(r_dims, Tag::ldigo), r_md));
  const ValueInfo* b_info = Input(r, 3);
  Tensor b_plain = PackBias(s, b_info != nullptr ? &b_info->constant : nullptr);
  ASSIGN_OR_RETURN(memory b_mem, onednn::ReorderConstant(b_plain, bias, bias));
  constants = {
      {DNNL_ARG_WEIGHTS_LAYER, w_mem}, {DNNL_ARG_WEIGHTS_ITER, r_mem}, {DNNL_ARG_BIAS, b_mem}};
  if (has_peepholes) {
    Tensor p_plain = PackPeepholes(s, Input(r, 7)->constant);
    ASSIGN_OR_RETURN(memory p_mem, onednn::ReorderConstant(p_plain, peep, peep));
    constants.emplace_back(DNNL_ARG_WEIGHTS_PEEPHOLE, p_mem);
  }

  std::vector<Binding> sources, destinations;
  sources.push_back({DNNL_ARG_SRC_LAYER, 0, src_layer, false, {}, {}});
  if (has_h0) sources.push_back(StateBinding(s, DNNL_ARG_SRC_ITER, h0_index));
  if (has_c0) sources.push_back(StateBinding(s, DNNL_ARG_SRC_ITER_C, c0_index));
  // Y: direct unless omitted (a buffer) or bidirectional in layout 0 ([T,N,D,H] -> [T,D,N,H]).
  Binding y{DNNL_ARG_DST_LAYER, 0, dst_layer, false, {}, {}};
  if (!WantsOutput(r, 0)) {
    y.index = -1;
    y.staging.resize(static_cast<size_t>(s.seq * s.batch * s.dirs * s.hidden));
  } else if (!s.batch_major && s.dirs == 2 && s.batch > 1) {
    y.staged = true;
    y.onnx_dims = {s.seq, s.dirs, s.batch, s.hidden};
    y.staging.resize(static_cast<size_t>(s.seq * s.batch * s.dirs * s.hidden));
  }
  destinations.push_back(std::move(y));
  if (want_h) destinations.push_back(StateBinding(s, DNNL_ARG_DST_ITER, h_out_index));
  if (want_c) destinations.push_back(StateBinding(s, DNNL_ARG_DST_ITER_C, c_out_index));

  KernelChoice choice;
  choice.kernel = std::make_unique<OnednnRnnKernel>(std::move(primitive), impl, std::move(sources),
                                                    std::move(destinations), std::move(constants));
  choice.input_layouts.assign(r.inputs.size(), Layout::kPlain);
  choice.output_layouts.assign(r.outputs.size(), Layout::kPlain);
  return std::optional<KernelChoice>(std::move(choice));
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnRnnKernel(const KernelRequest& request) {
  try {
    return Create(request);
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) return NotApplicable();
    return onednn::FromDnnlError(e, request.node.DebugName());
  }
}

void RegisterOnednnRnnKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_rnn",
                     .ops = {{"", "LSTM"}, {"", "GRU"}, {"", "RNN"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateOnednnRnnKernel});
}

}  // namespace qtune::runtime
