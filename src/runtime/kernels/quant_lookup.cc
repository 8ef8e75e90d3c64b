// qtune::QLookup (quant_ops.h): y[i] = table[x[i] - min(X's type)], for 8-bit x and a
// 256-entry table of the output type. The reference kernel and the fast kernel share the
// loop; the fast one runs on any layout (it is elementwise) and splits large tensors
// over threads.
#include <omp.h>

#include <algorithm>

#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

constexpr int64_t kChunk = int64_t{1} << 16;

Status CheckOperands(const ir::Node& node, const Tensor& x, const Tensor& table, const Tensor& y) {
  if (!IsInt8OrUint8(x.dtype()) || !IsInt8OrUint8(table.dtype()) || table.num_elements() != 256 ||
      y.dtype() != table.dtype() || y.num_elements() != x.num_elements()) {
    return InvalidArgumentError(node.DebugName() +
                                ": needs an 8-bit X and a 256-entry 8-bit table, got X " +
                                x.DebugString() + ", table " + table.DebugString());
  }
  return Status::Ok();
}

// Byte-wise lookup: the table is indexed by the code's unsigned byte, rotated so that
// index 0 holds the type's minimum (int8 -128 is byte 0x80).
void Lookup(const Tensor& x, const Tensor& table, Tensor& y, int threads) {
  uint8_t by_byte[256];
  const auto* t = static_cast<const uint8_t*>(table.raw_data());
  const int offset = x.dtype() == DataType::kInt8 ? 128 : 0;
  for (int b = 0; b < 256; ++b) by_byte[b] = t[(b + offset) & 255];
  const auto* in = static_cast<const uint8_t*>(x.raw_data());
  auto* out = static_cast<uint8_t*>(y.raw_data());
  const int64_t n = x.num_elements();
  const int64_t pieces = (n + kChunk - 1) / kChunk;
  if (threads <= 1 || pieces <= 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = by_byte[in[i]];
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t end = std::min(n, (p + 1) * kChunk);
    for (int64_t i = p * kChunk; i < end; ++i) out[i] = by_byte[in[i]];
  }
}

StatusOr<std::vector<Tensor>> QLookupReference(const KernelArgs& args) {
  if (args.inputs.size() != 2 || !args.inputs[0].is_valid() || !args.inputs[1].is_valid()) {
    return InvalidArgumentError(args.node.DebugName() + ": needs X and Table");
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(args.inputs[1].dtype(), args.inputs[0].sizes()));
  RETURN_IF_ERROR(CheckOperands(args.node, args.inputs[0], args.inputs[1], y));
  Lookup(args.inputs[0], args.inputs[1], y, 1);
  return std::vector<Tensor>{y};
}

class QLookupKernel : public Kernel {
 public:
  QLookupKernel(const ir::Node& node, int threads) : node_(node), threads_(threads) {}
  std::string Describe() const override { return "quant:lookup"; }
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    RETURN_IF_ERROR(CheckOperands(node_, inputs[0], inputs[1], outputs[0]));
    Lookup(inputs[0], inputs[1], outputs[0], threads_);
    return Status::Ok();
  }

 private:
  const ir::Node& node_;
  int threads_;
};

}  // namespace

void RegisterQuantLookupReference(ReferenceRegistry& registry) {
  registry.Register(std::string("qtune::") + kQLookup, QLookupReference);
}

StatusOr<std::optional<KernelChoice>> CreateQuantLookupKernel(const KernelRequest& request) {
  if (!IsQtuneOp(request.node, kQLookup) || request.inputs.size() != 2 ||
      request.inputs[0] == nullptr || request.inputs[1] == nullptr) {
    return NotApplicable();
  }
  Layout layout = request.input_layouts.empty() ? Layout::kPlain : request.input_layouts[0];
  if (request.inputs[0]->sizes.size() != 4) layout = Layout::kPlain;
  KernelChoice choice;
  choice.kernel = std::make_unique<QLookupKernel>(request.node, request.threads);
  choice.input_layouts = {layout, Layout::kPlain};
  choice.output_layouts = {layout};
  choice.inplace_input = 0;
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterQuantLookupKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_qlookup",
                     .tier = KernelTier::kNative,
                     .ops = {{"qtune", "QLookup"}},
                     .reads = {Layout::kPlain, Layout::kNhwc},
                     .factory = &CreateQuantLookupKernel});
}

}  // namespace qtune::runtime
