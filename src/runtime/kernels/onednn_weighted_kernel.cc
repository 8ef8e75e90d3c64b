#include "runtime/kernels/onednn_weighted_kernel.h"

#include <cstring>

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
    if (convert_src_) {
      convert_args_.Bind(DNNL_ARG_FROM, src_, inputs[0].raw_data());
      convert_args_.Set(DNNL_ARG_TO, *converted_src_);
      convert_args_.Execute(*convert_src_);
      args_.Set(DNNL_ARG_SRC, *converted_src_);
    } else {
      args_.Bind(DNNL_ARG_SRC, src_, inputs[0].raw_data());
    }
    args_.Set(DNNL_ARG_WEIGHTS, weights_);
    if (bias_) args_.Set(DNNL_ARG_BIAS, *bias_);
    args_.Bind(DNNL_ARG_DST, dst_, outputs[0].raw_data());
    args_.Execute(primitive_);
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return onednn::FromDnnlError(e, "running " + name_);
  }
}

}  // namespace qtune::runtime
