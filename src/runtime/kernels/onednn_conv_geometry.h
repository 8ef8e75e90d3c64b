// ONNX Conv and ConvTranspose window attributes (strides, dilations, pads, auto_pad,
// output_padding, output_shape) as oneDNN wants them, shared by the fp32 and int8
// convolution and deconvolution kernels.
#pragma once

#include <algorithm>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace qtune::runtime::onednn {

struct ConvGeometry {
  dnnl::memory::dims strides, dilations, pad_begin, pad_end;
};

// For a 2-D convolution with input sizes x [N,C,H,W], weights w [O,I,kh,kw] and the
// shape-inferred output y: oneDNN's 0-based dilations, and right pads recomputed so that
// oneDNN's output size matches y (auto_pad resolved the ONNX way).
inline ConvGeometry ComputeConvGeometry(const ir::Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& w,
                                        const std::vector<int64_t>& y) {
  ConvGeometry g;
  std::vector<int64_t> strides = node.GetInts("strides", {1, 1});
  std::vector<int64_t> dilations = node.GetInts("dilations", {1, 1});
  std::vector<int64_t> pads = node.GetInts("pads", {0, 0, 0, 0});
  std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  for (size_t i = 0; i < 2; ++i) {
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

// For a 2-D transposed convolution with input sizes x [N,C,H,W], ONNX weights w
// [C,M/g,kh,kw] and the shape-inferred output y: the right pads are recomputed so that
// oneDNN's output size is y (this covers output_padding); pads derived from output_shape
// or SAME_* the ONNX way (SAME_UPPER puts the odd one at the end, every other mode at the
// beginning); dilations 0-based. nullopt for what oneDNN cannot express (negative pads)
// and malformed attributes.
inline std::optional<ConvGeometry> ComputeDeconvGeometry(const ir::Node& node,
                                                         const std::vector<int64_t>& x,
                                                         const std::vector<int64_t>& w,
                                                         const std::vector<int64_t>& y) {
  std::vector<int64_t> strides = node.GetInts("strides", {1, 1});
  std::vector<int64_t> dilations = node.GetInts("dilations", {1, 1});
  std::vector<int64_t> pads = node.GetInts("pads", {0, 0, 0, 0});
  std::vector<int64_t> output_padding = node.GetInts("output_padding", {0, 0});
  std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return std::nullopt;
  }
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 ||
      output_padding.size() != 2) {
    return std::nullopt;
  }
  const bool derive_pads = !node.GetInts("output_shape", {}).empty() || auto_pad == "SAME_UPPER" ||
                           auto_pad == "SAME_LOWER";
  ConvGeometry g;
  for (size_t i = 0; i < 2; ++i) {
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

}  // namespace qtune::runtime::onednn
