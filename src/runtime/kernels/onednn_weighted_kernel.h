// The kernel behind every oneDNN primitive of the form dst = op(src, weights[, bias]) with
// constant weights and bias bound once at creation: convolution, deconvolution, matmul.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {

class OnednnWeightedKernel : public Kernel {
 public:
  // `src` describes input 0 as the plan stores it (fp32). `sum_input` >= 0: the primitive
  // has a sum post-op and node input `sum_input` holds what it adds (copied into dst before
  // running, unless the plan placed dst in its buffer). `compute_src`: the primitive reads
  // its source in another type (bf16); each run converts input 0 into a kernel-owned buffer.
  OnednnWeightedKernel(dnnl::primitive primitive, std::string name, dnnl::memory::desc src,
                       dnnl::memory::desc dst, dnnl::memory weights,
                       std::optional<dnnl::memory> bias, int sum_input = -1,
                       std::optional<dnnl::memory::desc> compute_src = std::nullopt);

  std::string Describe() const override { return name_; }
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override;

 private:
  dnnl::primitive primitive_;
  std::string name_;
  dnnl::memory::desc src_, dst_;
  dnnl::memory weights_;
  std::optional<dnnl::memory> bias_;
  int sum_input_;
  std::optional<dnnl::memory> converted_src_;  // bf16 copy of input 0, see compute_src
  std::optional<dnnl::reorder> convert_src_;
  onednn::ExecArgs args_, convert_args_;
};

}  // namespace qtune::runtime
