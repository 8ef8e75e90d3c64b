#include "runtime/kernel_test_util.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>

#include "ir/builder.h"
#include "runtime/reference/registry.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime::kernel_testing {
namespace {

// Floats framing each output buffer; a kernel that writes outside its output changes them.
constexpr int64_t kGuardFloats = 64;
constexpr uint32_t kGuardBits = 0x7FC0BADDu;      // a quiet NaN nobody computes
constexpr uint32_t kUnwrittenBits = 0x7FC0DEADu;  // fills outputs before the run

Tensor Allocated(DataType dtype, std::vector<int64_t> sizes) {
  auto t = Tensor::Allocate(dtype, std::move(sizes));
  QTUNE_CHECK(t.ok());
  return *std::move(t);
}

// Permutes rank-4 data of any element type: `to_nhwc` reads [N,C,H,W] and writes
// [N,H,W,C], else back.
Tensor Permute(const Tensor& src, bool to_nhwc) {
  QTUNE_CHECK(src.rank() == 4);
  const std::vector<int64_t>& s = src.sizes();
  int64_t n = s[0], c = to_nhwc ? s[1] : s[3], h = to_nhwc ? s[2] : s[1], w = to_nhwc ? s[3] : s[2];
  Tensor dst = Allocated(
      src.dtype(), to_nhwc ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w});
  const size_t elem = DataTypeSize(src.dtype());
  const auto* in = static_cast<const std::byte*>(src.raw_data());
  auto* out = static_cast<std::byte*>(dst.raw_data());
  for (int64_t in_n = 0; in_n < n; ++in_n)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          int64_t plain = ((in_n * c + ic) * h + ih) * w + iw;
          int64_t nhwc = ((in_n * h + ih) * w + iw) * c + ic;
          if (to_nhwc) {
            std::memcpy(out + nhwc * elem, in + plain * elem, elem);
          } else {
            std::memcpy(out + plain * elem, in + nhwc * elem, elem);
          }
        }
  return dst;
}

// float32, uint8, int8, int32 or int64 values as float32, for comparing outputs.
Tensor AsFloat(const Tensor& t) {
  if (t.dtype() == DataType::kFloat32) return t.Clone();
  Tensor f = Allocated(DataType::kFloat32, t.sizes());
  float* out = f.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.dtype()) {
      case DataType::kUint8:
        out[i] = static_cast<float>(t.data<uint8_t>()[i]);
        break;
      case DataType::kInt8:
        out[i] = static_cast<float>(t.data<int8_t>()[i]);
        break;
      case DataType::kInt64:
        out[i] = static_cast<float>(t.data<int64_t>()[i]);
        break;
      default:
        out[i] = static_cast<float>(t.data<int32_t>()[i]);
        break;
    }
  }
  return f;
}

bool IsComparable(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kUint8 || dtype == DataType::kInt8 ||
         dtype == DataType::kInt32 || dtype == DataType::kInt64;
}

// The reference outputs through EvaluateNode. Where it does not serve a qtune fused op,
// the op's registered reference kernel (under "qtune::<op>" or its bare name) runs directly.
StatusOr<std::vector<Tensor>> Reference(const ir::Node& node, std::span<const Tensor> inputs,
                                        int64_t opset) {
  StatusOr<std::vector<Tensor>> evaluated = EvaluateNode(node, inputs, opset);
  if (evaluated.ok() || node.domain().empty()) return evaluated;
  const ReferenceRegistry& registry = ReferenceRegistry::Get();
  ReferenceKernel fn = registry.Find(node.domain() + "::" + node.op_type());
  if (fn == nullptr) fn = registry.Find(node.op_type());
  if (fn == nullptr) return evaluated;
  return fn(KernelArgs{node, inputs, opset});
}

int ThreadsForTests() {
  const char* env = std::getenv("QTUNE_KERNEL_TEST_THREADS");
  return env != nullptr ? std::atoi(env) : 1;
}

// One output buffer: kGuardFloats sentinels, the output, kGuardFloats sentinels. The
// sentinels and the unwritten fill are the bit patterns above, repeated bytewise for
// outputs whose elements are not 4 bytes wide.
struct GuardedOutput {
  Tensor storage;  // 64-byte aligned bytes; the output starts kGuardBytes in
  Tensor view;     // the output, borrowed from storage, physical sizes

  static constexpr int64_t kGuardBytes = kGuardFloats * 4;

  GuardedOutput(DataType dtype, const std::vector<int64_t>& physical) {
    int64_t n = 1;
    for (int64_t d : physical) n *= d;
    const int64_t bytes = n * static_cast<int64_t>(DataTypeSize(dtype));
    storage = Allocated(DataType::kUint8, {bytes + 2 * kGuardBytes});
    auto* p = static_cast<std::byte*>(storage.raw_data());
    for (int64_t i = 0; i < storage.num_elements(); ++i) {
      bool inside = i >= kGuardBytes && i < kGuardBytes + bytes;
      uint32_t bits = inside ? kUnwrittenBits : kGuardBits;
      std::memcpy(p + i, reinterpret_cast<const std::byte*>(&bits) + i % 4, 1);
    }
    view = Tensor::Borrow(dtype, physical, p + kGuardBytes);
  }

  // The byte offset of the first changed sentinel (negative before the output), or nullopt.
  std::optional<int64_t> DamagedGuard() const {
    const auto* p = static_cast<const std::byte*>(storage.raw_data());
    const int64_t bytes = static_cast<int64_t>(view.byte_size());
    for (int64_t i = 0; i < kGuardBytes; ++i) {
      int64_t after = kGuardBytes + bytes + i;
      if (p[i] != reinterpret_cast<const std::byte*>(&kGuardBits)[i % 4]) return i - kGuardBytes;
      if (p[after] != reinterpret_cast<const std::byte*>(&kGuardBits)[after % 4]) return bytes + i;
    }
    return std::nullopt;
  }
};

struct Comparison {
  double max_error = 0, max_reference = 0, allowed = 0;
  int64_t mismatches = 0;
  std::string first_mismatches;
};

Comparison Compare(const Tensor& got, const Tensor& want, double tolerance) {
  Comparison c;
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (std::isfinite(w[i])) c.max_reference = std::max(c.max_reference, std::fabs(double{w[i]}));
  }
  c.allowed = tolerance * (1.0 + c.max_reference);
  std::ostringstream out;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    // Equal values (infinities included) and NaN against NaN agree; NaN against a number
    // is an infinite error.
    double error = 0;
    if (!(g[i] == w[i]) && !(std::isnan(g[i]) && std::isnan(w[i]))) {
      error = std::fabs(double{g[i]} - double{w[i]});
      if (std::isnan(error)) error = INFINITY;
    }
    c.max_error = std::max(c.max_error, error);
    if (!(error <= c.allowed)) {
      if (++c.mismatches <= 5)
        out << "\n    [" << i << "] kernel " << g[i] << " reference " << w[i];
    }
  }
  c.first_mismatches = out.str();
  return c;
}

std::string DescribeCase(const KernelCase& kc, const std::string& kernel_name) {
  std::ostringstream out;
  out << (kc.domain.empty() ? "" : kc.domain + "::") << kc.op_type << " [" << kc.label << "] seed "
      << kc.seed << " (replay: QTUNE_TEST_SEED=" << kc.seed << ") inputs:";
  for (const KernelInput& in : kc.inputs) {
    if (!in.value.is_valid()) {
      out << " omitted";
    } else {
      out << " " << SizesString(in.value.sizes())
          << (in.constant ? "(const)" : std::string("(") + LayoutName(in.layout) + ")");
    }
  }
  if (!kernel_name.empty()) out << " kernel " << kernel_name;
  return out.str();
}

}  // namespace

uint32_t TestSeed(uint32_t fallback) {
  const char* env = std::getenv("QTUNE_TEST_SEED");
  return env != nullptr ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : fallback;
}

Tensor RandomTensor(const std::vector<int64_t>& sizes, std::mt19937& rng, float lo, float hi) {
  Tensor t = Allocated(DataType::kFloat32, sizes);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

Tensor PlainToNhwc(const Tensor& plain) { return Permute(plain, /*to_nhwc=*/true); }
Tensor NhwcToPlain(const Tensor& nhwc) { return Permute(nhwc, /*to_nhwc=*/false); }

Tensor ToLayout(const Tensor& plain, Layout layout) {
  return layout == Layout::kNhwc ? PlainToNhwc(plain) : plain.Clone();
}

std::string SizesString(const std::vector<int64_t>& sizes) {
  if (sizes.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "x" : "") + std::to_string(sizes[i]);
  return s;
}

::testing::AssertionResult CheckKernel(const KernelCase& kc) {
  auto fail = [&](const std::string& kernel_name) {
    return ::testing::AssertionFailure() << DescribeCase(kc, kernel_name) << ": ";
  };
  // A one-node graph; constants are initializers so the request sees their values.
  ir::GraphBuilder builder(kc.opset);
  if (!kc.domain.empty()) builder.ImportOpset(kc.domain, 1);
  std::vector<ir::Value*> values;
  std::vector<Tensor> plain_inputs;
  for (size_t i = 0; i < kc.inputs.size(); ++i) {
    const KernelInput& in = kc.inputs[i];
    plain_inputs.push_back(in.value);
    std::string name = "in" + std::to_string(i);
    if (!in.value.is_valid()) {
      values.push_back(nullptr);
    } else if (in.constant) {
      values.push_back(builder.Initializer(name, in.value));
    } else {
      values.push_back(builder.Input(name, in.value.dtype(), in.value.sizes()));
    }
  }
  ir::OpOptions options;
  options.name = "node";
  options.domain = kc.domain;
  for (ir::Value* out :
       builder.MultiOp(kc.op_type, values, kc.num_outputs, kc.attributes, options)) {
    builder.Output(out);
  }
  std::unique_ptr<ir::Graph> graph = builder.Build();
  const ir::Node& node = *graph->FindNode("node");

  auto reference = Reference(node, plain_inputs, kc.opset);
  if (!reference.ok()) return fail("") << "reference failed: " << reference.status().ToString();

  std::vector<ValueInfo> input_infos(kc.inputs.size()), output_infos;
  KernelRequest request{node, kc.opset, ThreadsForTests(), {}, {}, {}};
  for (size_t i = 0; i < kc.inputs.size(); ++i) {
    const KernelInput& in = kc.inputs[i];
    input_infos[i] = MakeInfo(in.value.dtype(), in.value.sizes());
    if (in.constant) input_infos[i].constant = in.value;
    request.inputs.push_back(in.value.is_valid() ? &input_infos[i] : nullptr);
    request.input_layouts.push_back(in.constant ? Layout::kPlain : in.layout);
  }
  for (const Tensor& out : *reference) output_infos.push_back(MakeInfo(out.dtype(), out.sizes()));
  for (const ValueInfo& info : output_infos) request.outputs.push_back(&info);

  auto created = kc.factory(request);
  if (!created.ok())
    return fail("") << "the factory returned an error: " << created.status().ToString();
  std::optional<KernelChoice>& choice = *created;
  if (kc.expect == Expect::kNotApplicable) {
    if (!choice) return ::testing::AssertionSuccess();
    return fail(choice->kernel->Describe()) << "expected NotApplicable, the factory applied";
  }
  if (!choice && kc.expect == Expect::kFastPathIfSupported) return ::testing::AssertionSuccess();
  if (!choice) return fail("") << "expected the fast path, the factory returned NotApplicable";
  std::string name = choice->kernel->Describe();
  if (choice->input_layouts.size() != kc.inputs.size() ||
      choice->output_layouts.size() != reference->size()) {
    return fail(name) << "the choice has " << choice->input_layouts.size() << " input and "
                      << choice->output_layouts.size() << " output layouts";
  }

  // Inputs as the compiler presents them: constants plain, activations in the chosen layout.
  std::vector<Tensor> run_inputs(kc.inputs.size());
  for (size_t i = 0; i < kc.inputs.size(); ++i) {
    const KernelInput& in = kc.inputs[i];
    if (!in.value.is_valid()) continue;
    Layout layout = in.constant ? Layout::kPlain : choice->input_layouts[i];
    if (layout == Layout::kNhwc && in.value.rank() != 4) {
      return fail(name) << "input " << i << " of rank " << in.value.rank() << " asked in nhwc";
    }
    run_inputs[i] = ToLayout(in.value, layout);
  }
  std::vector<GuardedOutput> guarded;
  std::vector<Tensor> run_outputs;
  for (size_t i = 0; i < reference->size(); ++i) {
    DataType dtype = (*reference)[i].dtype();
    if (!IsComparable(dtype)) {
      return fail(name) << "output " << i << " is " << DataTypeName(dtype)
                        << "; the harness compares float32, uint8, int8 and int32";
    }
    guarded.emplace_back(dtype, PhysicalSizes((*reference)[i].sizes(), choice->output_layouts[i]));
    run_outputs.push_back(guarded.back().view);
  }
  if (kc.in_place_input >= 0) {
    size_t k = static_cast<size_t>(kc.in_place_input);
    if (run_inputs[k].sizes() != run_outputs[0].sizes() || kc.inputs[k].constant) {
      return fail(name) << "in-place input " << k << " is " << SizesString(run_inputs[k].sizes())
                        << " in " << LayoutName(choice->input_layouts[k]) << ", the output "
                        << SizesString(run_outputs[0].sizes());
    }
    std::memcpy(run_outputs[0].raw_data(), run_inputs[k].raw_data(), run_outputs[0].byte_size());
    run_inputs[k] = run_outputs[0];
  }
  std::vector<Tensor> inputs_before;
  for (const Tensor& t : run_inputs) inputs_before.push_back(t.is_valid() ? t.Clone() : Tensor());

  Status run = choice->kernel->Run(run_inputs, run_outputs);
  if (!run.ok()) return fail(name) << "Run failed: " << run.ToString();

  for (size_t i = 0; i < run_inputs.size(); ++i) {
    if (!run_inputs[i].is_valid() || static_cast<int>(i) == kc.in_place_input) continue;
    if (std::memcmp(run_inputs[i].raw_data(), inputs_before[i].raw_data(),
                    run_inputs[i].byte_size()) != 0) {
      return fail(name) << "the kernel wrote to its input " << i;
    }
  }
  for (size_t i = 0; i < guarded.size(); ++i) {
    if (auto damaged = guarded[i].DamagedGuard()) {
      return fail(name) << "output " << i << ": the sentinel at byte " << *damaged << " (of "
                        << guarded[i].view.byte_size() << ") was overwritten";
    }
    Tensor got = choice->output_layouts[i] == Layout::kNhwc ? NhwcToPlain(guarded[i].view)
                                                            : guarded[i].view.Clone();
    if (got.dtype() != (*reference)[i].dtype()) {
      return fail(name) << "output " << i << " is " << DataTypeName(got.dtype())
                        << ", the reference's " << DataTypeName((*reference)[i].dtype());
    }
    Comparison c = Compare(AsFloat(got), AsFloat((*reference)[i]), kc.tolerance);
    if (c.mismatches > 0) {
      return fail(name) << "output " << i << " " << SizesString((*reference)[i].sizes()) << " in "
                        << LayoutName(choice->output_layouts[i]) << ": " << c.mismatches
                        << " elements off, max error " << c.max_error << " > allowed " << c.allowed
                        << c.first_mismatches;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace qtune::runtime::kernel_testing
