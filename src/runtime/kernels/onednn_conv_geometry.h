// ONNX Conv and ConvTranspose window attributes (strides, dilations, pads, auto_pad,
// output_padding, output_shape) as oneDNN wants them, shared by the fp32 and int8
// convolution and deconvolution kernels, for 1-, 2- and 3-D windows (rank-3, -4 and -5
// activations), and the activation layout each rank runs in.
#pragma once

#include <algorithm>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "runtime/fusion/fused_ops.h"
#include "runtime/kernels/kernel.h"

namespace qtune::runtime::onednn {

// Where the fp32 window kernels (Conv, ConvTranspose, pooling) keep rank-`rank` activations:
// rank 4 channels-last (kNhwc, what the rest of the plan uses); ranks 3 and 5 plain (ncw,
// ncdhw), since the plan's layouts are rank-4 only. Measured on a 1-D STFT convolution
// (1 -> 514 channels, kernel 512, stride 160, pads 256, 16000 samples, 1 thread), oneDNN's
// plain kernel (gemm:jit) takes 1.3 ms and its channels-last brgconv 30 ms (1.2 ms
// without the pads).
inline Layout WindowLayout(size_t rank) { return rank == 4 ? Layout::kNhwc : Layout::kPlain; }

inline dnnl::memory::format_tag WindowTag(size_t rank) {
  using tag = dnnl::memory::format_tag;
  return rank == 3 ? tag::ncw : rank == 5 ? tag::ncdhw : tag::nhwc;
}

// Plain ONNX weight layouts [O,I,spatial...] (oiw/oihw/oidhw), grouped when `grouped`
// ([G,O/G,I,spatial...]). `transposed`: ConvTranspose's [I,O,spatial...] (io*).
inline dnnl::memory::format_tag WeightsTag(size_t rank, bool grouped, bool transposed) {
  using tag = dnnl::memory::format_tag;
  if (transposed) {
    if (rank == 3) return grouped ? tag::acbd : tag::bac;  // giow, iow
    if (rank == 5) return grouped ? tag::giodhw : tag::iodhw;
    return grouped ? tag::giohw : tag::iohw;
  }
  if (rank == 3) return grouped ? tag::goiw : tag::oiw;
  if (rank == 5) return grouped ? tag::goidhw : tag::oidhw;
  return grouped ? tag::goihw : tag::oihw;
}

inline bool IsWindowRank(size_t rank) { return rank >= 3 && rank <= 5; }

// True when the window attributes of `node` (absent, or sized for `dims` spatial axes)
// can be read by the geometry functions below.
inline bool WindowAttributesFit(const ir::Node& node, size_t dims) {
  auto fits = [&](const char* name, size_t n) {
    size_t got = node.GetInts(name, {}).size();
    return got == 0 || got == n;
  };
  return fits("strides", dims) && fits("dilations", dims) && fits("pads", 2 * dims) &&
         fits("output_padding", dims);
}

struct ConvGeometry {
  dnnl::memory::dims strides, dilations, pad_begin, pad_end;
};

// For a convolution with input sizes x [N,C,spatial...], weights w [O,I,k...] and the
// shape-inferred output y: oneDNN's 0-based dilations, and right pads recomputed so that
// oneDNN's output size matches y (auto_pad resolved the ONNX way). REQUIRES: x, w and y of
// the same rank >= 3 (shape inference checked the attributes against it).
inline ConvGeometry ComputeConvGeometry(const ir::Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& w,
                                        const std::vector<int64_t>& y) {
  ConvGeometry g;
  const size_t dims = x.size() - 2;
  std::vector<int64_t> strides = node.GetInts("strides", std::vector<int64_t>(dims, 1));
  std::vector<int64_t> dilations = node.GetInts("dilations", std::vector<int64_t>(dims, 1));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * dims, 0));
  std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  for (size_t i = 0; i < dims; ++i) {
    int64_t effective = (w[i + 2] - 1) * dilations[i] + 1;
    int64_t begin = pads[i];
    if (auto_pad == "VALID") {
      begin = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, (y[i + 2] - 1) * strides[i] + effective - x[i + 2]);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
    g.strides.push_back(strides[i]);
    g.dilations.push_back(dilations[i] - 1);
    g.pad_begin.push_back(begin);
    g.pad_end.push_back((y[i + 2] - 1) * strides[i] + effective - x[i + 2] - begin);
  }
  return g;
}

// For a transposed convolution with input sizes x [N,C,spatial...], ONNX weights w
// [C,M/g,k...] and the shape-inferred output y: the right pads are recomputed so that
// oneDNN's output size is y (this covers output_padding); pads derived from output_shape
// or SAME_* the ONNX way (SAME_UPPER puts the odd one at the end, every other mode at the
// beginning); dilations 0-based. nullopt for what oneDNN cannot express (negative pads)
// and malformed attributes.
inline std::optional<ConvGeometry> ComputeDeconvGeometry(const ir::Node& node,
                                                         const std::vector<int64_t>& x,
                                                         const std::vector<int64_t>& w,
                                                         const std::vector<int64_t>& y) {
  if (x.size() < 3) return std::nullopt;
  const size_t dims = x.size() - 2;
  std::vector<int64_t> strides = node.GetInts("strides", std::vector<int64_t>(dims, 1));
  std::vector<int64_t> dilations = node.GetInts("dilations", std::vector<int64_t>(dims, 1));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * dims, 0));
  std::vector<int64_t> output_padding =
      node.GetInts("output_padding", std::vector<int64_t>(dims, 0));
  std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return std::nullopt;
  }
  if (auto_pad == "VALID") pads.assign(2 * dims, 0);
  if (strides.size() != dims || dilations.size() != dims || pads.size() != 2 * dims ||
      output_padding.size() != dims || w.size() != x.size() || y.size() != x.size()) {
    return std::nullopt;
  }
  const bool derive_pads = !node.GetInts("output_shape", {}).empty() || auto_pad == "SAME_UPPER" ||
                           auto_pad == "SAME_LOWER";
  ConvGeometry g;
  for (size_t i = 0; i < dims; ++i) {
    const int64_t effective = (w[i + 2] - 1) * dilations[i] + 1;
    const int64_t natural = (x[i + 2] - 1) * strides[i] + output_padding[i] + effective;
    const int64_t total = natural - y[i + 2];
    const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
    const int64_t begin = !derive_pads ? pads[i] : auto_pad == "SAME_UPPER" ? half : total - half;
    const int64_t end = (x[i + 2] - 1) * strides[i] + effective - begin - y[i + 2];
    if (begin < 0 || end < 0) return std::nullopt;
    g.strides.push_back(strides[i]);
    g.dilations.push_back(dilations[i] - 1);
    g.pad_begin.push_back(begin);
    g.pad_end.push_back(end);
  }
  return g;
}

// Ok when `request` is a float32 Conv or qtune::FusedConv with rank-`rank` input, weights
// and output, constant weights and a constant float32 bias if any, and window attributes
// that fit, grouped or not; else FailedPrecondition saying why (for a factory's
// NotApplicable reason).
inline Status CheckFloatConvWindow(const KernelRequest& request, size_t rank) {
  const ir::Node& node = request.node;
  if (!IsFusedConv(node) && !(node.op_type() == "Conv" && node.domain().empty())) {
    return FailedPreconditionError("not a Conv");
  }
  if (request.inputs.size() < 2 || request.inputs[0] == nullptr || request.inputs[1] == nullptr ||
      request.outputs.empty() || request.outputs[0] == nullptr) {
    return FailedPreconditionError("an input or the output is missing");
  }
  const ValueInfo& x = *request.inputs[0];
  const ValueInfo& w = *request.inputs[1];
  const ValueInfo* b = request.input(2);
  if (x.dtype != DataType::kFloat32 || w.dtype != DataType::kFloat32 || x.sizes.size() != rank ||
      w.sizes.size() != rank || request.outputs[0]->sizes.size() != rank || !w.has_constant() ||
      (b != nullptr && (!b->has_constant() || b->dtype != DataType::kFloat32)) ||
      !WindowAttributesFit(node, rank - 2)) {
    return FailedPreconditionError("not a float32 " + std::to_string(rank - 2) +
                                   "-D convolution with constant weights");
  }
  if (request.precision != Precision::kFloat32) {
    return FailedPreconditionError("it computes in bf16");
  }
  return Status::Ok();
}

// CheckFloatConvWindow, and not grouped.
inline Status CheckFloatConvWithConstantWeights(const KernelRequest& request, size_t rank) {
  RETURN_IF_ERROR(CheckFloatConvWindow(request, rank));
  if (request.node.GetInt("group", 1) != 1 ||
      request.inputs[1]->sizes[1] != request.inputs[0]->sizes[1]) {
    return FailedPreconditionError("grouped");
  }
  return Status::Ok();
}

}  // namespace qtune::runtime::onednn
