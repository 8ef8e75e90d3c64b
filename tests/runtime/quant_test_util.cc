#include "runtime/quant_test_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/quant_math.h"
#include "ir/builder.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/reference/registry.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime::quant_testing {
namespace {

using namespace qlinear;

constexpr int64_t kGuardBytes = 64;
constexpr uint8_t kGuardByte = 0xA5;

Tensor Allocated(DataType dtype, std::vector<int64_t> sizes) {
  auto t = Tensor::Allocate(dtype, std::move(sizes));
  QTUNE_CHECK(t.ok());
  return *std::move(t);
}

// Rank-4 layout change of any element type: [N,C,H,W] <-> [N,H,W,C].
Tensor Permute(const Tensor& src, bool to_nhwc) {
  const auto& s = src.sizes();
  int64_t n = s[0], c = to_nhwc ? s[1] : s[3], h = to_nhwc ? s[2] : s[1], w = to_nhwc ? s[3] : s[2];
  Tensor dst = Allocated(
      src.dtype(), to_nhwc ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w});
  const size_t e = DataTypeSize(src.dtype());
  const auto* in = static_cast<const std::byte*>(src.raw_data());
  auto* out = static_cast<std::byte*>(dst.raw_data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          int64_t plain = ((b * c + ic) * h + ih) * w + iw;
          int64_t nhwc = ((b * h + ih) * w + iw) * c + ic;
          std::memcpy(out + (to_nhwc ? nhwc : plain) * e, in + (to_nhwc ? plain : nhwc) * e, e);
        }
  return dst;
}

Tensor ToLayout(const Tensor& t, Layout layout) {
  return layout == Layout::kNhwc ? Permute(t, true) : t.Clone();
}

double ValueAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt8:
      return t.data<int8_t>()[i];
    case DataType::kUint8:
      return t.data<uint8_t>()[i];
    default:
      return t.data<float>()[i];
  }
}

// X as float: x_scale * (x - x_zp), or W per channel (channel of element i given).
Tensor Dequantize(const Tensor& q, const Tensor& scale, const Tensor& zp, int64_t channel_stride,
                  int64_t channels) {
  Tensor f = Allocated(DataType::kFloat32, q.sizes());
  for (int64_t i = 0; i < q.num_elements(); ++i) {
    int64_t c = scale.num_elements() == 1 ? 0 : (i / channel_stride) % channels;
    int64_t zc = zp.num_elements() == 1 ? 0 : (i / channel_stride) % channels;
    f.data<float>()[i] =
        static_cast<float>(ValueAt(q, i) - ValueAt(zp, zc)) * scale.data<float>()[c];
  }
  return f;
}

}  // namespace

uint32_t TestSeed(uint32_t fallback) {
  const char* env = std::getenv("QTUNE_TEST_SEED");
  return env != nullptr ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : fallback;
}

QGraph BuildGraph(const QCase& c) {
  ir::GraphBuilder builder(17);
  builder.ImportOpset(kQtuneDomain, 1);
  std::vector<ir::Value*> values;
  size_t count = c.inputs.size();
  while (count > 0 && !c.inputs[count - 1].is_valid()) --count;
  for (size_t i = 0; i < count; ++i) {
    const Tensor& t = c.inputs[i];
    std::string name = "in" + std::to_string(i);
    if (!t.is_valid()) {
      values.push_back(nullptr);
    } else if (i == kX || i == kSum) {
      values.push_back(builder.Input(name, t.dtype(), t.sizes()));
    } else {
      values.push_back(builder.Initializer(name, t));
    }
  }
  ir::OpOptions options;
  options.name = "node";
  options.domain = kQtuneDomain;
  builder.Output(builder.Op(c.spec.matmul ? kQMatMul : kQConv, values, c.attributes, options));
  QGraph g;
  g.graph = builder.Build();
  g.node = g.graph->FindNode("node");
  return g;
}

StatusOr<Tensor> RunIntegerReference(const QCase& c) {
  QGraph g = BuildGraph(c);
  ReferenceKernel fn =
      ReferenceRegistry::Get().Find(c.spec.matmul ? "qtune::QMatMul" : "qtune::QConv");
  if (fn == nullptr) return InternalError("no integer reference registered");
  ASSIGN_OR_RETURN(std::vector<Tensor> out, fn(KernelArgs{*g.node, c.inputs, 17}));
  return out[0];
}

StatusOr<Tensor> RunFloatComposition(const QCase& c) {
  QGraph g = BuildGraph(c);
  const Tensor& w = c.inputs[kW];
  const int64_t channels = c.spec.c_out;
  const int64_t stride = c.spec.matmul ? 1 : w.num_elements() / channels;
  Tensor xf = Dequantize(c.inputs[kX], c.inputs[kXScale], c.inputs[kXZeroPoint], 1, 1);
  Tensor wf = Dequantize(w, c.inputs[kWScale], c.inputs[kWZeroPoint], stride, channels);
  ReferenceKernel op = ReferenceRegistry::Get().Find(c.spec.matmul ? "MatMul" : "Conv");
  std::vector<Tensor> args = {xf, wf};
  if (!c.spec.matmul && c.inputs[kBias].is_valid()) args.push_back(c.inputs[kBias]);
  ASSIGN_OR_RETURN(std::vector<Tensor> out, op(KernelArgs{*g.node, args, 17}));
  Tensor real = out[0];
  float* r = real.data<float>();
  const int64_t n = real.num_elements();
  if (c.spec.matmul && c.inputs[kBias].is_valid()) {
    for (int64_t i = 0; i < n; ++i) r[i] += c.inputs[kBias].data<float>()[i % channels];
  }
  if (c.inputs.size() > kSum && c.inputs[kSum].is_valid()) {
    Tensor sum =
        c.inputs[kSum].dtype() == DataType::kFloat32
            ? c.inputs[kSum]
            : Dequantize(c.inputs[kSum], c.inputs[kSumScale], c.inputs[kSumZeroPoint], 1, 1);
    for (int64_t i = 0; i < n; ++i) r[i] += sum.data<float>()[i];
  }
  ApplyActivation(ReadActivation(*g.node), r, n);
  if (!c.inputs[kYScale].is_valid()) return real;
  const Tensor& yzp = c.inputs[kYZeroPoint];
  float ys = c.inputs[kYScale].data<float>()[0];
  Tensor y = Allocated(yzp.dtype(), real.sizes());
  for (int64_t i = 0; i < n; ++i) {
    int32_t z = static_cast<int32_t>(ValueAt(yzp, 0));
    if (yzp.dtype() == DataType::kInt8) {
      y.data<int8_t>()[i] = QuantizeToInt<int8_t>(r[i], ys, z);
    } else {
      y.data<uint8_t>()[i] = QuantizeToInt<uint8_t>(r[i], ys, z);
    }
  }
  return y;
}

Diff CompareOutputs(const Tensor& got, const Tensor& want) {
  Diff d;
  d.total = want.num_elements();
  if (got.dtype() != want.dtype() || got.sizes() != want.sizes()) {
    d.max_error = INFINITY;
    d.first_mismatch = "got " + got.DebugString() + ", want " + want.DebugString();
    return d;
  }
  double scale = 1.0;
  if (want.dtype() == DataType::kFloat32) {
    double max_abs = 0;
    for (int64_t i = 0; i < d.total; ++i) max_abs = std::max(max_abs, std::fabs(ValueAt(want, i)));
    scale = 1.0 + max_abs;
  }
  for (int64_t i = 0; i < d.total; ++i) {
    double g = ValueAt(got, i), w = ValueAt(want, i);
    double e = g == w ? 0.0 : std::fabs(g - w) / scale;
    if (std::isnan(e)) e = INFINITY;
    if (e == 0.0) ++d.exact;
    if (e > d.max_error) {
      d.max_error = e;
      d.first_mismatch =
          "[" + std::to_string(i) + "] got " + std::to_string(g) + " want " + std::to_string(w);
    }
  }
  return d;
}

std::unique_ptr<OwnedRequest> MakeRequest(const ir::Node& node, const std::vector<Tensor>& inputs,
                                          const std::vector<bool>& constant,
                                          const std::vector<ValueInfo>& outputs, Layout activation,
                                          int threads) {
  auto r = std::make_unique<OwnedRequest>();
  r->inputs.resize(inputs.size());
  r->outputs = outputs;
  r->request.reset(new KernelRequest{node, 17, threads, {}, {}, {}});
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_valid()) {
      r->inputs[i] = MakeInfo(inputs[i].dtype(), inputs[i].sizes());
      if (constant[i]) r->inputs[i].constant = inputs[i];
    }
    r->request->inputs.push_back(inputs[i].is_valid() ? &r->inputs[i] : nullptr);
    bool nhwc = !constant[i] && inputs[i].is_valid() && inputs[i].rank() == 4;
    r->request->input_layouts.push_back(nhwc ? activation : Layout::kPlain);
  }
  for (const ValueInfo& o : r->outputs) r->request->outputs.push_back(&o);
  return r;
}

StatusOr<FastRun> RunFast(const QCase& c, KernelFactory factory, const FastRunOptions& options) {
  QGraph g = BuildGraph(c);
  ASSIGN_OR_RETURN(Tensor want, RunIntegerReference(c));
  std::vector<bool> constant(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) constant[i] = i != kX && i != kSum;
  auto owned = MakeRequest(*g.node, c.inputs, constant, {MakeInfo(want.dtype(), want.sizes())},
                           Layout::kNhwc, options.threads);
  ASSIGN_OR_RETURN(std::optional<KernelChoice> choice, factory(*owned->request));
  FastRun result;
  if (!choice) return result;
  result.applied = true;
  result.kernel_name = choice->kernel->Describe();
  result.inplace_input = choice->inplace_input;
  if (choice->input_layouts.size() != c.inputs.size() || choice->output_layouts.size() != 1) {
    return InternalError("the choice has the wrong number of layouts");
  }
  std::vector<Tensor> run_inputs(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].is_valid()) run_inputs[i] = ToLayout(c.inputs[i], choice->input_layouts[i]);
  }
  const Layout out_layout = choice->output_layouts[0];
  const std::vector<int64_t> physical = PhysicalSizes(want.sizes(), out_layout);
  const int64_t bytes = static_cast<int64_t>(want.byte_size());
  auto run_once = [&](int fill, bool in_place) -> StatusOr<Tensor> {
    Tensor storage = Allocated(DataType::kUint8, {bytes + 2 * kGuardBytes});
    uint8_t* p = storage.data<uint8_t>();
    std::memset(p, kGuardByte, storage.byte_size());
    std::memset(p + kGuardBytes, fill, bytes);
    std::vector<Tensor> outputs = {Tensor::Borrow(want.dtype(), physical, p + kGuardBytes)};
    std::vector<Tensor> inputs = run_inputs;
    if (in_place) {
      const Tensor& shared = run_inputs[choice->inplace_input];
      std::memcpy(p + kGuardBytes, shared.raw_data(), bytes);
      inputs[choice->inplace_input] = outputs[0];
    }
    std::vector<Tensor> before;
    for (const Tensor& t : inputs) before.push_back(t.is_valid() ? t.Clone() : Tensor());
    RETURN_IF_ERROR(choice->kernel->Run(inputs, outputs));
    for (int64_t i = 0; i < kGuardBytes; ++i) {
      if (p[i] != kGuardByte || p[kGuardBytes + bytes + i] != kGuardByte) {
        return InternalError(result.kernel_name + " wrote outside its output");
      }
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].is_valid() || (in_place && static_cast<int>(i) == choice->inplace_input)) {
        continue;
      }
      if (std::memcmp(inputs[i].raw_data(), before[i].raw_data(), before[i].byte_size()) != 0) {
        return InternalError(result.kernel_name + " wrote to input " + std::to_string(i));
      }
    }
    Tensor out = outputs[0].Clone();
    return out_layout == Layout::kNhwc ? Permute(out, false) : out;
  };
  ASSIGN_OR_RETURN(Tensor first, run_once(0x00, false));
  ASSIGN_OR_RETURN(Tensor second, run_once(0xFF, false));
  if (std::memcmp(first.raw_data(), second.raw_data(), first.byte_size()) != 0) {
    return InternalError(result.kernel_name + " leaves output elements unwritten");
  }
  if (options.in_place && choice->inplace_input >= 0) {
    ASSIGN_OR_RETURN(Tensor shared, run_once(0x00, true));
    if (std::memcmp(first.raw_data(), shared.raw_data(), first.byte_size()) != 0) {
      return InternalError(result.kernel_name + " computes differently in place");
    }
  }
  result.output = first;
  return result;
}

StatusOr<std::unique_ptr<PreparedKernel>> Prepare(const QCase& c, KernelFactory factory,
                                                  int threads) {
  auto p = std::make_unique<PreparedKernel>();
  p->graph = BuildGraph(c);
  std::vector<bool> constant(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) constant[i] = i != kX && i != kSum;
  // The output's type and sizes from shape inference of the op (QConv: Conv's sizes).
  const ShapeFn shape = ShapeRegistry::Get().Find(c.spec.matmul ? kQMatMul : kQConv);
  if (shape == nullptr) return InternalError("no shape function");
  std::vector<ValueInfo> infos(c.inputs.size());
  std::vector<const ValueInfo*> info_ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].is_valid()) {
      infos[i] = MakeInfo(c.inputs[i].dtype(), c.inputs[i].sizes());
      if (constant[i]) infos[i].constant = c.inputs[i];
    }
    info_ptrs.push_back(c.inputs[i].is_valid() ? &infos[i] : nullptr);
  }
  ASSIGN_OR_RETURN(std::vector<ValueInfo> outs, shape(ShapeArgs{*p->graph.node, info_ptrs, 17}));
  p->request = MakeRequest(*p->graph.node, c.inputs, constant, {outs[0]}, Layout::kNhwc, threads);
  ASSIGN_OR_RETURN(std::optional<KernelChoice> choice, factory(*p->request->request));
  if (!choice) return p;
  p->kernel = std::move(choice->kernel);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    p->inputs.push_back(c.inputs[i].is_valid() ? ToLayout(c.inputs[i], choice->input_layouts[i])
                                               : Tensor());
  }
  p->outputs.push_back(
      Allocated(outs[0].dtype, PhysicalSizes(outs[0].sizes, choice->output_layouts[0])));
  return p;
}

double MedianMillis(Kernel& kernel, std::span<const Tensor> inputs, std::span<Tensor> outputs,
                    int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) QTUNE_CHECK(kernel.Run(inputs, outputs).ok());
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    QTUNE_CHECK(kernel.Run(inputs, outputs).ok());
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace qtune::runtime::quant_testing
