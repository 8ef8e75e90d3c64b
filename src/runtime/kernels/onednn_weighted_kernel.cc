#include "runtime/kernels/onednn_weighted_kernel.h"

#include <cstring>
#include <unordered_map>

#include "runtime/kernels/onednn_context.h"

namespace qtune::runtime {

OnednnWeightedKernel::OnednnWeightedKernel(dnnl::primitive primitive, std::string name,
                                           dnnl::memory::desc src, dnnl::memory::desc dst,
                                           dnnl::memory weights, std::optional<dnnl::memory> bias,
                                           int sum_input,
                                           std::optional<dnnl::memory::desc> compute_src)
    : primitive_(std::move(primitive)),
      name_(std::move(name)),
      src_(src),
      dst_(dst),
      weights_(std::move(weights)),
      bias_(std::move(bias)),
      sum_input_(sum_input) {
  if (compute_src) {
    converted_src_ = dnnl::memory(*compute_src, onednn::Engine());
    convert_src_ = dnnl::reorder(
        dnnl::reorder::primitive_desc(onednn::Engine(), src_, onednn::Engine(), *compute_src));
  }
}

Status OnednnWeightedKernel::Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  try {
    if (sum_input_ >= 0) {
      const Tensor& sum = inputs[sum_input_];
      if (sum.raw_data() != outputs[0].raw_data()) {
        std::memcpy(outputs[0].raw_data(), sum.raw_data(), outputs[0].byte_size());
      }
    }
    dnnl::memory src = onednn::WrapMemory(src_, inputs[0].raw_data());
    if (convert_src_) {
      convert_src_->execute(onednn::Stream(), src, *converted_src_);
      src = *converted_src_;
    }
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS, weights_},
        {DNNL_ARG_DST, onednn::WrapMemory(dst_, outputs[0].raw_data())}};
    if (bias_) args[DNNL_ARG_BIAS] = *bias_;
    primitive_.execute(onednn::Stream(), args);
    onednn::Stream().wait();
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return onednn::FromDnnlError(e, "running " + name_);
  }
}

}  // namespace qtune::runtime
