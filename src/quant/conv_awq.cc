#include "quant/conv_awq.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "quant/conv_weight_blocks.h"

namespace qtune::quant {

int64_t AccumulateChannelStats(const Tensor& x, std::vector<double>& sum_abs,
                               std::vector<double>& sum_sq) {
  const int64_t n = x.size(0), c = x.size(1);
  const int64_t inner = x.num_elements() / std::max<int64_t>(n * c, 1);
  const float* data = x.data<float>();
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* p = data + (b * c + ch) * inner;
      double a = 0.0, q = 0.0;
      for (int64_t i = 0; i < inner; ++i) {
        a += std::fabs(p[i]);
        q += static_cast<double>(p[i]) * p[i];
      }
      sum_abs[static_cast<size_t>(ch)] += a;
      sum_sq[static_cast<size_t>(ch)] += q;
    }
  }
  return n * inner;
}

int64_t AppendConvPatches(const Tensor& x, const ir::Node& conv, int64_t kh, int64_t kw,
                          int64_t max_new, std::vector<float>& rows) {
  if (x.rank() != 4 || max_new <= 0) return 0;
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const std::vector<int64_t> strides = conv.GetInts("strides", {1, 1});
  const std::vector<int64_t> dil = conv.GetInts("dilations", {1, 1});
  std::vector<int64_t> pads = conv.GetInts("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) return 0;
  const std::string auto_pad = conv.GetString("auto_pad", "NOTSET");
  const int64_t ekh = (kh - 1) * dil[0] + 1, ekw = (kw - 1) * dil[1] + 1;
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t oh = (h + strides[0] - 1) / strides[0], ow = (w + strides[1] - 1) / strides[1];
    const int64_t ph = std::max<int64_t>(0, (oh - 1) * strides[0] + ekh - h);
    const int64_t pw = std::max<int64_t>(0, (ow - 1) * strides[1] + ekw - w);
    const bool upper = auto_pad == "SAME_UPPER";
    pads = {upper ? ph / 2 : ph - ph / 2, upper ? pw / 2 : pw - pw / 2, 0, 0};
  }
  const int64_t oh = (h + pads[0] + pads[2] - ekh) / strides[0] + 1;
  const int64_t ow = (w + pads[1] + pads[3] - ekw) / strides[1] + 1;
  if (oh <= 0 || ow <= 0) return 0;
  const int64_t positions = n * oh * ow;
  const int64_t step = std::max<int64_t>(1, positions / max_new);
  const float* data = x.data<float>();
  int64_t added = 0;
  for (int64_t pos = 0; pos < positions && added < max_new; pos += step, ++added) {
    const int64_t b = pos / (oh * ow), oy = (pos / ow) % oh, ox = pos % ow;
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* plane = data + (b * c + ch) * h * w;
      for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t y = oy * strides[0] - pads[0] + ky * dil[0];
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t xx = ox * strides[1] - pads[1] + kx * dil[1];
          rows.push_back(y >= 0 && y < h && xx >= 0 && xx < w ? plane[y * w + xx] : 0.0f);
        }
      }
    }
  }
  return added;
}

namespace {

// sum over patches and output channels of (p . W'_o - y)^2; W' [O, I * S].
double PatchError(const std::vector<float>& wq, int64_t out, int64_t len, std::span<const float> x,
                  int64_t rows, const std::vector<double>& y) {
  double err = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x.data() + r * len;
    for (int64_t o = 0; o < out; ++o) {
      const float* wo = wq.data() + o * len;
      double acc = 0.0;
      for (int64_t i = 0; i < len; ++i) acc += static_cast<double>(p[i]) * wo[i];
      const double d = acc - y[static_cast<size_t>(r * out + o)];
      err += d * d;
    }
  }
  return err;
}

}  // namespace

AwqResult SearchConvAwqScale(const Tensor& w, std::span<const float> x, int64_t rows,
                             std::span<const float> mean_abs, const MatrixQuantSpec& spec,
                             int alpha_steps) {
  const ConvWeightShape shape = ConvShapeOf(w.sizes());
  const int64_t k = shape.in, len = shape.in * shape.spatial, out = shape.out;
  const float* wd = w.data<float>();
  std::vector<double> y(static_cast<size_t>(rows * out), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x.data() + r * len;
    for (int64_t o = 0; o < out; ++o) {
      double acc = 0.0;
      for (int64_t i = 0; i < len; ++i) acc += static_cast<double>(p[i]) * wd[o * len + i];
      y[static_cast<size_t>(r * out + o)] = acc;
    }
  }
  const int64_t n = out * shape.spatial;
  return SearchAlphaGrid(mean_abs.first(static_cast<size_t>(k)), alpha_steps,
                         [&](const std::vector<float>& s) {
                           const std::vector<float> m = ConvWeightToMatrix(wd, shape, s);
                           const QuantizedMatrix q = QuantizeMatrix(m.data(), k, n, n, 1, spec);
                           const std::vector<float> wq = DequantizeConvWeight(q, shape, s);
                           return PatchError(wq, out, len, x, rows, y);
                         });
}

}  // namespace qtune::quant
