// Native Split in kPlain, any element type: each output is a set of strided block copies
// of the input (one memcpy per output per outer index), with the piece sizes shape
// inference resolved at compile time (attribute, input 1 or an even split). Copies
// instead of views: the pieces of a split along an inner axis are not contiguous.
#include <cstring>

#include "core/shape.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"

namespace qtune::runtime {
namespace {

class NativeSplitKernel final : public Kernel {
 public:
  // Output i takes `piece_bytes[i]` bytes of each of the `outer` input blocks of
  // `block_bytes` bytes.
  NativeSplitKernel(int64_t outer, int64_t block_bytes, std::vector<int64_t> piece_bytes)
      : outer_(outer), block_bytes_(block_bytes), piece_bytes_(std::move(piece_bytes)) {}

  std::string Describe() const override { return "native:split"; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const auto* src = static_cast<const std::byte*>(inputs[0].raw_data());
    int64_t offset = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const int64_t piece = piece_bytes_[i];
      if (outputs[i].is_valid() && piece > 0) {
        auto* dst = static_cast<std::byte*>(outputs[i].raw_data());
        for (int64_t o = 0; o < outer_; ++o) {
          std::memcpy(dst + o * piece, src + o * block_bytes_ + offset, piece);
        }
      }
      offset += piece;
    }
    return Status::Ok();
  }

 private:
  int64_t outer_, block_bytes_;
  std::vector<int64_t> piece_bytes_;
};

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateNativeSplitKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (node.op_type() != "Split" || !node.domain().empty() || request.inputs.empty() ||
      request.inputs[0] == nullptr || request.outputs.empty()) {
    return NotApplicable();
  }
  const ValueInfo& x = *request.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.sizes.size());
  int64_t axis = node.GetInt("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) return NotApplicable();
  if (axis < 0) axis += rank;
  const int64_t elem = static_cast<int64_t>(DataTypeSize(x.dtype));
  int64_t outer = 1, inner_bytes = elem;
  for (int64_t d = 0; d < axis; ++d) outer *= x.sizes[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner_bytes *= x.sizes[d];
  std::vector<int64_t> piece_bytes;
  int64_t total = 0;
  for (const ValueInfo* out : request.outputs) {
    // Every output present, same type and rank, the same sizes off the split axis.
    if (out == nullptr || out->dtype != x.dtype || out->sizes.size() != x.sizes.size()) {
      return NotApplicable();
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && out->sizes[d] != x.sizes[d]) return NotApplicable();
    }
    piece_bytes.push_back(out->sizes[axis] * inner_bytes);
    total += out->sizes[axis];
  }
  if (total != x.sizes[axis]) return NotApplicable();
  KernelChoice choice;
  choice.kernel = std::make_unique<NativeSplitKernel>(outer, x.sizes[axis] * inner_bytes,
                                                      std::move(piece_bytes));
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  choice.output_layouts.assign(request.outputs.size(), Layout::kPlain);
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterNativeSplitKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_split",
                     .tier = KernelTier::kNative,
                     .ops = {{"", "Split"}},
                     .factory = &CreateNativeSplitKernel});
}

}  // namespace qtune::runtime
