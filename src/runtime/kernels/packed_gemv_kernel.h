// The kernel of a GEMV over weights packed once at creation, shared by the fp32 one
// (native_gemv.cc: PackedGemvWeights, RunGemv) and the low-bit one
// (native_lowbit_matmul.cc: PackedLowBitWeights, RunLowBitGemv): each run is one call of
// the packed product over input 0, with the bias and ReLU applied in its registers; a Sum
// input and another activation run over the output afterwards.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/native_gemv_packed.h"

namespace qtune::runtime {

// `Weights` has n(), the output columns; `run` computes y[rows, n] from x[rows, k].
template <typename Weights>
class PackedGemvKernel final : public Kernel {
 public:
  using RunFn = void (*)(const Weights& w, const float* x, int64_t rows, float* y,
                         const GemvOptions& options);

  // `options.bias` is set from `bias` here. Describe() is `label` and the ISA's name.
  // `sum_input` >= 0: that input (y's sizes) is added to the product before the activation.
  PackedGemvKernel(std::string label, RunFn run, std::unique_ptr<Weights> weights,
                   std::vector<float> bias, Activation activation, int64_t rows,
                   GemvOptions options, int sum_input = -1)
      : label_(std::move(label)),
        run_(run),
        weights_(std::move(weights)),
        bias_(std::move(bias)),
        activation_(std::move(activation)),
        rows_(rows),
        options_(options),
        sum_input_(sum_input) {
    options_.bias = bias_.empty() ? nullptr : bias_.data();
    options_.relu = activation_.op == "Relu" && !activation_.has_post_linear() && sum_input < 0;
    other_activation_ = !activation_.op.empty() && !options_.relu;
  }

  std::string Describe() const override { return label_ + GemvIsaName(options_.isa); }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* x = static_cast<const float*>(inputs[0].raw_data());
    float* y = static_cast<float*>(outputs[0].raw_data());
    run_(*weights_, x, rows_, y, options_);
    if (sum_input_ >= 0) {
      const float* sum = inputs[sum_input_].data<float>();
      const int64_t n = rows_ * weights_->n();
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] += sum[i];
    }
    if (other_activation_) ApplyActivation(activation_, y, rows_ * weights_->n());
    return Status::Ok();
  }

 private:
  std::string label_;
  RunFn run_;
  std::unique_ptr<Weights> weights_;
  std::vector<float> bias_;
  Activation activation_;
  int64_t rows_;
  GemvOptions options_;
  int sum_input_;
  bool other_activation_ = false;
};

}  // namespace qtune::runtime
