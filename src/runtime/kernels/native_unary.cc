// Native float32 Log, Erf, Reciprocal, Floor and Ceil: one loop over the elements with the
// same C library functions as the reference tier (bit-identical results; oneDNN's log is
// off by ~1e-6 at log(1) = 0, and 2.6 has no plain erf). Elementwise, so the input's
// layout is kept, and the output may take over the input's buffer.
#include <cmath>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"

namespace qtune::runtime {
namespace {

enum class UnaryOp { kLog, kErf, kReciprocal, kFloor, kCeil };

std::optional<UnaryOp> OpOf(const ir::Node& node) {
  if (!node.domain().empty()) return std::nullopt;
  const std::string& op = node.op_type();
  if (op == "Log") return UnaryOp::kLog;
  if (op == "Erf") return UnaryOp::kErf;
  if (op == "Reciprocal") return UnaryOp::kReciprocal;
  if (op == "Floor") return UnaryOp::kFloor;
  if (op == "Ceil") return UnaryOp::kCeil;
  return std::nullopt;
}

template <typename Fn>
void Apply(const float* x, float* y, int64_t n, Fn fn) {
  for (int64_t i = 0; i < n; ++i) y[i] = fn(x[i]);
}

class NativeUnaryKernel final : public Kernel {
 public:
  NativeUnaryKernel(UnaryOp op, std::string name) : op_(op), name_(std::move(name)) {}

  std::string Describe() const override { return "native:" + name_; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* x = static_cast<const float*>(inputs[0].raw_data());
    float* y = static_cast<float*>(outputs[0].raw_data());
    const int64_t n = outputs[0].num_elements();
    switch (op_) {
      case UnaryOp::kLog:
        Apply(x, y, n, [](float v) { return std::log(v); });
        break;
      case UnaryOp::kErf:
        Apply(x, y, n, [](float v) { return std::erf(v); });
        break;
      case UnaryOp::kReciprocal:
        Apply(x, y, n, [](float v) { return 1.0f / v; });
        break;
      case UnaryOp::kFloor:
        Apply(x, y, n, [](float v) { return std::floor(v); });
        break;
      case UnaryOp::kCeil:
        Apply(x, y, n, [](float v) { return std::ceil(v); });
        break;
    }
    return Status::Ok();
  }

 private:
  UnaryOp op_;
  std::string name_;
};

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateNativeUnaryKernel(const KernelRequest& request) {
  std::optional<UnaryOp> op = OpOf(request.node);
  if (!op || request.inputs.size() != 1 || request.inputs[0] == nullptr ||
      request.outputs.size() != 1 || request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& y = *request.outputs[0];
  if (x.dtype != DataType::kFloat32 || y.dtype != DataType::kFloat32 || x.sizes != y.sizes) {
    return NotApplicable();
  }
  KernelChoice choice;
  choice.kernel = std::make_unique<NativeUnaryKernel>(*op, request.node.op_type());
  const Layout layout = request.input_layouts.empty() ? Layout::kPlain : request.input_layouts[0];
  choice.input_layouts = {layout};
  choice.output_layouts = {layout};
  choice.inplace_input = 0;
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterNativeUnaryKernels(KernelRegistry& registry) {
  registry.Register(
      {.name = "native_unary",
       .tier = KernelTier::kNative,
       .ops = {{"", "Log"}, {"", "Erf"}, {"", "Reciprocal"}, {"", "Floor"}, {"", "Ceil"}},
       .input_dtypes = {DataType::kFloat32},
       .reads = {Layout::kPlain, Layout::kNhwc},
       .factory = &CreateNativeUnaryKernel});
}

}  // namespace qtune::runtime
