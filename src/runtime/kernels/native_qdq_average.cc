// Native GlobalAveragePool of uint8/int8 data between a Q/DQ pair (the pass-through
// fusion's pools that carry kPoolScaleAttribute, fusion/quant_ops.h): bit for bit what the
// reference pool kernel computes for them, which is what DQ -> float pool -> Q computes on
// the reference tier: every tap dequantized to float32 (a 256-entry table of the same
// DequantizeFromInt values), summed in double in spatial order per channel, the mean
// rounded to float32, then QuantizeToInt. Reads the layout its input is in: channels-last
// (as the int8 convolutions write it: the per-channel sums run across a row of channels at
// a time) or plain (one contiguous plane per channel); channel blocks are split over the
// threads. Other ranks and the windowed AveragePool stay on the reference tier.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/quant_math.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"

namespace qtune::runtime {
namespace {

constexpr int64_t kChannelBlock = 64;

template <typename T>
class NativeQdqGlobalAverageKernel final : public Kernel {
 public:
  NativeQdqGlobalAverageKernel(int64_t batch, int64_t spatial, int64_t channels, Layout layout,
                               float scale, int32_t zero_point, int threads)
      : layout_(layout),
        batch_(batch),
        spatial_(spatial),
        channels_(channels),
        scale_(scale),
        zero_point_(zero_point),
        threads_(threads) {
    for (int v = 0; v < 256; ++v) {
      const T q = static_cast<T>(static_cast<uint8_t>(v));
      table_[v] = DequantizeFromInt<T>(q, scale, zero_point);
    }
  }

  std::string Describe() const override { return "native:qdq_global_average"; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const auto* x = static_cast<const uint8_t*>(inputs[0].raw_data());  // bytes index table_
    T* y = static_cast<T*>(outputs[0].raw_data());
    const int64_t blocks = (channels_ + kChannelBlock - 1) / kChannelBlock;
    const int64_t pieces = batch_ * blocks;
    const int threads = threads_ > 0 ? threads_ : omp_get_max_threads();
    auto piece = [&](int64_t p) { Average(x, y, p / blocks, (p % blocks) * kChannelBlock); };
    if (threads <= 1 || pieces <= 1) {
      for (int64_t p = 0; p < pieces; ++p) piece(p);
    } else {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t p = 0; p < pieces; ++p) piece(p);
    }
    return Status::Ok();
  }

 private:
  // Channels [c0, c0 + kChannelBlock) of image n.
  void Average(const uint8_t* x, T* y, int64_t n, int64_t c0) const {
    const int64_t width = std::min(kChannelBlock, channels_ - c0);
    std::array<double, kChannelBlock> sum{};
    if (layout_ == Layout::kNhwc) {
      const uint8_t* image = x + n * spatial_ * channels_ + c0;
      for (int64_t p = 0; p < spatial_; ++p) {
        const uint8_t* row = image + p * channels_;
        for (int64_t c = 0; c < width; ++c) sum[c] += table_[row[c]];
      }
    } else {
      for (int64_t c = 0; c < width; ++c) {
        const uint8_t* plane = x + (n * channels_ + c0 + c) * spatial_;
        for (int64_t p = 0; p < spatial_; ++p) sum[c] += table_[plane[p]];
      }
    }
    for (int64_t c = 0; c < width; ++c) {
      const float mean = static_cast<float>(sum[c] / static_cast<double>(spatial_));
      y[n * channels_ + c0 + c] = QuantizeToInt<T>(mean, scale_, zero_point_);
    }
  }

  Layout layout_;  // of the input; the output [N, C, 1, 1] has the same bytes in both
  int64_t batch_, spatial_, channels_;
  float scale_;
  int32_t zero_point_;
  int threads_;
  std::array<float, 256> table_{};
};

StatusOr<std::optional<KernelChoice>> CreateNativeQdqAverageKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (node.op_type() != "GlobalAveragePool" || !node.domain().empty() ||
      node.FindAttribute(kPoolScaleAttribute) == nullptr) {
    return NotApplicable();
  }
  if (request.inputs.empty() || request.inputs[0] == nullptr || request.outputs.empty() ||
      request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& x = *request.inputs[0];
  if ((x.dtype != DataType::kUint8 && x.dtype != DataType::kInt8) || x.sizes.size() != 4) {
    return NotApplicable(request, "only rank-4 uint8/int8 inputs");
  }
  const int64_t batch = x.sizes[0], channels = x.sizes[1], spatial = x.sizes[2] * x.sizes[3];
  if (batch <= 0 || channels <= 0 || spatial <= 0) return NotApplicable();
  const float scale = node.GetFloat(kPoolScaleAttribute, 0);
  const auto zero_point = static_cast<int32_t>(node.GetInt(kPoolZeroPointAttribute, 0));
  const Layout layout = request.input_layouts.empty() ? Layout::kPlain : request.input_layouts[0];
  KernelChoice choice;
  if (x.dtype == DataType::kUint8) {
    choice.kernel = std::make_unique<NativeQdqGlobalAverageKernel<uint8_t>>(
        batch, spatial, channels, layout, scale, zero_point, request.threads);
  } else {
    choice.kernel = std::make_unique<NativeQdqGlobalAverageKernel<int8_t>>(
        batch, spatial, channels, layout, scale, zero_point, request.threads);
  }
  choice.input_layouts = {layout};
  choice.output_layouts = {layout};
  return std::optional<KernelChoice>(std::move(choice));
}

}  // namespace

void RegisterNativeQdqAverageKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_qdq_average",
                     .tier = KernelTier::kNative,
                     .ops = {{"", "GlobalAveragePool"}},
                     .input_dtypes = {DataType::kUint8, DataType::kInt8},
                     .reads = {Layout::kNhwc, Layout::kPlain},
                     .factory = &CreateNativeQdqAverageKernel});
}

}  // namespace qtune::runtime
