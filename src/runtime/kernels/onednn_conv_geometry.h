// ONNX Conv window attributes (strides, dilations, pads, auto_pad) as oneDNN wants them,
// shared by the fp32 and int8 convolution kernels.
#pragma once

#include <algorithm>
#include <oneapi/dnnl/dnnl.hpp>
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

}  // namespace qtune::runtime::onednn
