// What the oneDNN int8 kernels of qtune::QConv and qtune::QMatMul share: the translation of
// a QuantLinearParams into oneDNN 2.6 (v2 API) attributes, the weight preparation, and the
// kernel that runs the primitive.
//
// The primitive computes, per output element of channel o (v2 semantics, checked by the
// tests): v = (acc + bias_acc[o]) * output_scale[o], then the post-ops in order, then
// + dst zero point, rounded half to even and saturated to the dst type. A dst zero point
// comes with a round post-op before it (QuantizeLinear rounds, then adds the zero point). acc is
// the exact sum of (x - x_zp) * w. So with a domain divisor d (v = real / d):
//   output_scale[o] = x_scale * w_scale[o] / d,  bias_acc[o] = B[o] / (x_scale * w_scale[o]),
//   Sum as a sum post-op with scale sum_scale / d and its zero point (it must sit in dst),
//   or as a binary add post-op (float Sum with an int8 dst, d = 1).
// d = y_scale when the activation is positively homogeneous (none, Relu, LeakyRelu, Clip
// with scaled bounds) and Sum is not a binary add: everything stays in the y domain.
// Otherwise d = 1 (real domain) and 1/y_scale joins the post_linear eltwise at the end.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/fusion/quant_linear_params.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {

struct QuantPrimitiveAttributes {
  dnnl::primitive_attr attr;
  std::vector<float> output_scales;  // per output channel
  std::vector<float> bias;           // accumulator domain, per channel; empty for none
  dnnl::memory::data_type dst_type = dnnl::memory::data_type::f32;
  bool sum_in_dst = false;  // a sum post-op: Sum must be in dst before execution
  bool sum_binary = false;  // post-op 0 is a binary add reading Sum
  // A quantized Sum into a float output: Run dequantizes Sum into dst, then a float sum
  // post-op adds it.
  bool sum_dequantized = false;
};

struct QuantAttributeOptions {
  // The float Sum's memory desc (a binary add post-op); ignored otherwise.
  dnnl::memory::desc sum_desc;
  // Fold a quantized Sum's zero point into the bias (-sum_scale * sum_zp is a constant)
  // instead of the sum post-op's zero point, which fewer oneDNN kernels support (grouped
  // int8 convolutions decline it).
  bool sum_zero_point_in_bias = false;
};

// The attributes for `params`, or nullopt when oneDNN cannot express them (an activation
// oneDNN lacks).
std::optional<QuantPrimitiveAttributes> MakeQuantAttributes(const ir::Node& node,
                                                            const QuantLinearParams& params,
                                                            const QuantAttributeOptions& options);

// W with its zero points subtracted, as int8: element i belongs to output channel
// (i / channel_stride) % channels. nullopt when some w - w_zp does not fit int8 (a u8 W with
// zero point 128 does; weight zero points of 0 always do).
std::optional<Tensor> CenteredInt8Weights(const Tensor& w, const std::vector<int32_t>& zero_points,
                                          int64_t channel_stride, int64_t channels);

// The quantization parameters of a QConv/QMatMul request, when every parameter input is a
// constant (else nullopt: the reference runs).
StatusOr<std::optional<QuantLinearParams>> ReadRequestParams(const KernelRequest& request,
                                                             int64_t channels);

// Runs one int8 primitive: src = input 0, constant weights and bias bound at creation, Sum
// (input 9) copied (or, quantized into a float dst, dequantized) into dst before a sum
// post-op (unless the plan placed dst in its buffer), or bound as the binary post-op's
// operand.
class OnednnQuantKernel : public Kernel {
 public:
  struct Parts {
    dnnl::primitive primitive;
    std::string name;
    dnnl::memory::desc src, dst, sum;
    dnnl::memory weights;
    std::optional<dnnl::memory> bias;
    bool sum_in_dst = false, sum_binary = false;
    // Sum is dequantized into the float dst before execution (sum_in_dst is then set too).
    bool sum_dequantized = false;
    float sum_scale = 1.0f;
    int32_t sum_zero_point = 0;
  };
  explicit OnednnQuantKernel(Parts parts) : p_(std::move(parts)) {}
  std::string Describe() const override { return p_.name; }
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override;

 private:
  Parts p_;
  onednn::ExecArgs args_;
};

}  // namespace qtune::runtime
