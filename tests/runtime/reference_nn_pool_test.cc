// Pool reference kernels: ONNX node tests, hand-computed cases (ceil_mode, count_include_pad,
// Indices) and cross-checks (AveragePool as a depthwise Conv, MaxPool vs a naive loop).
#include <gtest/gtest.h>

#include <cmath>

#include "reference_nn_test_util.h"

namespace qtune::runtime::nn {
namespace {

using ir::Attribute;
using testing::CheckOnnxNodeCase;
using testing::RandomFloats;
using testing::RunNode;
using testing::RunOk;
using testing::TensorsNear;

Tensor F32(std::vector<int64_t> sizes, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(sizes), values);
}

testing::NodeSpecForTest Spec(std::string op, std::vector<Attribute> attributes,
                              size_t num_outputs = 1) {
  return {
      .op_type = std::move(op), .attributes = std::move(attributes), .num_outputs = num_outputs};
}

TEST(PoolTest, OnnxNodeTests) {
  struct Case {
    const char* name;
    ReferenceKernel kernel;
  };
  for (const Case& c : {
           Case{"test_averagepool_1d_default", &AveragePool},
           Case{"test_averagepool_2d_ceil", &AveragePool},
           Case{"test_averagepool_2d_default", &AveragePool},
           Case{"test_averagepool_2d_pads", &AveragePool},
           Case{"test_averagepool_2d_pads_count_include_pad", &AveragePool},
           Case{"test_averagepool_2d_precomputed_pads", &AveragePool},
           Case{"test_averagepool_2d_precomputed_pads_count_include_pad", &AveragePool},
           Case{"test_averagepool_2d_precomputed_same_upper", &AveragePool},
           Case{"test_averagepool_2d_precomputed_strides", &AveragePool},
           Case{"test_averagepool_2d_same_lower", &AveragePool},
           Case{"test_averagepool_2d_same_upper", &AveragePool},
           Case{"test_averagepool_2d_strides", &AveragePool},
           Case{"test_averagepool_3d_default", &AveragePool},
           Case{"test_maxpool_1d_default", &MaxPool},
           Case{"test_maxpool_2d_ceil", &MaxPool},
           Case{"test_maxpool_2d_default", &MaxPool},
           Case{"test_maxpool_2d_dilations", &MaxPool},
           Case{"test_maxpool_2d_pads", &MaxPool},
           Case{"test_maxpool_2d_precomputed_pads", &MaxPool},
           Case{"test_maxpool_2d_precomputed_same_upper", &MaxPool},
           Case{"test_maxpool_2d_precomputed_strides", &MaxPool},
           Case{"test_maxpool_2d_same_lower", &MaxPool},
           Case{"test_maxpool_2d_same_upper", &MaxPool},
           Case{"test_maxpool_2d_strides", &MaxPool},
           Case{"test_maxpool_2d_uint8", &MaxPool},
           Case{"test_maxpool_3d_default", &MaxPool},
           Case{"test_maxpool_with_argmax_2d_precomputed_pads", &MaxPool},
           Case{"test_maxpool_with_argmax_2d_precomputed_strides", &MaxPool},
           Case{"test_globalaveragepool", &GlobalAveragePool},
           Case{"test_globalaveragepool_precomputed", &GlobalAveragePool},
           Case{"test_globalmaxpool", &GlobalMaxPool},
           Case{"test_globalmaxpool_precomputed", &GlobalMaxPool},
       }) {
    SCOPED_TRACE(c.name);
    CheckOnnxNodeCase(c.name, c.kernel);
  }
}

TEST(PoolTest, CeilModeKeepsThePartialLastWindow) {
  Tensor x = F32({1, 1, 5}, {1, 2, 3, 4, 5});
  auto attrs = [](int64_t ceil) {
    return std::vector<Attribute>{Attribute::Ints("kernel_shape", {2}),
                                  Attribute::Ints("strides", {2}),
                                  Attribute::Int("ceil_mode", ceil)};
  };
  EXPECT_TRUE(TensorsNear(RunOk(&MaxPool, Spec("MaxPool", attrs(0)), {x}), F32({1, 1, 2}, {2, 4})));
  EXPECT_TRUE(
      TensorsNear(RunOk(&MaxPool, Spec("MaxPool", attrs(1)), {x}), F32({1, 1, 3}, {2, 4, 5})));
  EXPECT_TRUE(TensorsNear(RunOk(&AveragePool, Spec("AveragePool", attrs(1)), {x}),
                          F32({1, 1, 3}, {1.5f, 3.5f, 5})));
}

TEST(PoolTest, CeilModeDropsAWindowThatStartsInTheEndPadding) {
  // in 4, k 2, s 2, pads (0, 1): ceil((4 + 1 - 2) / 2) + 1 = 3 windows, but the third would
  // start at 4, inside the end padding, so there are 2.
  Tensor x = F32({1, 1, 4}, {1, 2, 3, 4});
  Tensor y =
      RunOk(&MaxPool,
            Spec("MaxPool", {Attribute::Ints("kernel_shape", {2}), Attribute::Ints("strides", {2}),
                             Attribute::Ints("pads", {0, 1}), Attribute::Int("ceil_mode", 1)}),
            {x});
  EXPECT_TRUE(TensorsNear(y, F32({1, 1, 2}, {2, 4})));
}

TEST(PoolTest, CountIncludePadDividesByThePaddedWindow) {
  Tensor x = F32({1, 1, 3}, {3, 6, 9});
  auto run = [&](int64_t include) {
    return RunOk(
        &AveragePool,
        Spec("AveragePool", {Attribute::Ints("kernel_shape", {3}), Attribute::Ints("pads", {1, 1}),
                             Attribute::Int("count_include_pad", include)}),
        {x});
  };
  EXPECT_TRUE(TensorsNear(run(0), F32({1, 1, 3}, {4.5f, 6, 7.5f})));
  EXPECT_TRUE(TensorsNear(run(1), F32({1, 1, 3}, {3, 6, 5})));
}

TEST(PoolTest, AveragePoolIncludingPadEqualsDepthwiseConvWithUniformWeights) {
  uint32_t seed = 1;
  for (int64_t size : {1, 2, 3, 5, 7, 15, 17}) {
    for (int64_t stride : {1, 2, 3}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " size " + std::to_string(size));
      const int64_t channels = 3;
      Tensor x = RandomFloats({2, channels, size, size + 1}, seed++);
      std::vector<Attribute> window = {Attribute::Ints("kernel_shape", {3, 2}),
                                       Attribute::Ints("strides", {stride, 1}),
                                       Attribute::Ints("pads", {1, 1, 1, 0})};
      std::vector<Attribute> pool_attrs = window;
      pool_attrs.push_back(Attribute::Int("count_include_pad", 1));
      Tensor pooled = RunOk(&AveragePool, Spec("AveragePool", pool_attrs), {x});
      Tensor w = F32({channels, 1, 3, 2}, std::vector<float>(channels * 6, 1.0f / 6));
      std::vector<Attribute> conv_attrs = window;
      conv_attrs.push_back(Attribute::Int("group", channels));
      Tensor conv = RunOk(&Conv, Spec("Conv", conv_attrs), {x, w});
      EXPECT_TRUE(TensorsNear(pooled, conv));
    }
  }
}

TEST(PoolTest, MaxPoolMatchesNaiveLoopAndIndicesPointAtTheMaximum) {
  uint32_t seed = 50;
  for (int64_t h : {1, 2, 3, 5, 7, 15, 17}) {
    for (int64_t dil : {1, 2}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " h " + std::to_string(h));
      const int64_t w = 5, kh = 2, kw = 3, sh = 2, sw = 1, pt = 1, pl = 1, pb = 0, pr = 1;
      if (h + pt + pb < (kh - 1) * dil + 1) continue;
      Tensor x = RandomFloats({2, 2, h, w}, seed++);
      KernelResult result = RunNode(
          &MaxPool,
          Spec("MaxPool",
               {Attribute::Ints("kernel_shape", {kh, kw}), Attribute::Ints("strides", {sh, sw}),
                Attribute::Ints("dilations", {dil, 1}), Attribute::Ints("pads", {pt, pl, pb, pr})},
               2),
          {x});
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      const Tensor& y = (*result)[0];
      const Tensor& indices = (*result)[1];
      const int64_t oh = (h + pt + pb - ((kh - 1) * dil + 1)) / sh + 1;
      const int64_t ow = (w + pl + pr - kw) / sw + 1;
      ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 2, oh, ow}));
      ASSERT_EQ(indices.dtype(), DataType::kInt64);
      for (int64_t p = 0; p < 4; ++p)
        for (int64_t r = 0; r < oh; ++r)
          for (int64_t c = 0; c < ow; ++c) {
            float best = -INFINITY;
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t hi = r * sh - pt + i * dil, wi = c * sw - pl + j;
                if (hi >= 0 && hi < h && wi >= 0 && wi < w) {
                  best = std::max(best, x.data<float>()[(p * h + hi) * w + wi]);
                }
              }
            int64_t yi = (p * oh + r) * ow + c;
            EXPECT_EQ(y.data<float>()[yi], best);
            EXPECT_EQ(x.data<float>()[indices.data<int64_t>()[yi]], best);
          }
    }
  }
}

TEST(PoolTest, StorageOrderOneGivesColumnMajorIndices) {
  // 2x3 planes, the second at offset 6. Column-major offset of (row, col) is row + 2 * col:
  // plane 0 has both maxima at (1, 1) -> 3; plane 1 at (1, 1) -> 3 and (1, 2) -> 5.
  Tensor x = F32({1, 2, 2, 3}, {0, 1, 2, 3, 9, 4, 0, 1, 2, 3, 4, 9});
  KernelResult r = RunNode(
      &MaxPool,
      Spec("MaxPool", {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Int("storage_order", 1)},
           2),
      {x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(
      TensorsNear((*r)[1], Tensor::FromVector<int64_t>({1, 2, 1, 2}, {3, 3, 6 + 3, 6 + 5})));
}

TEST(PoolTest, LpPoolIsTheNormOfTheWindow) {
  Tensor x = F32({1, 1, 4}, {3, -4, 0, 1});
  Tensor y2 = RunOk(&LpPool, Spec("LpPool", {Attribute::Ints("kernel_shape", {2})}), {x});
  EXPECT_TRUE(TensorsNear(y2, F32({1, 1, 3}, {5, 4, 1})));
  Tensor y1 = RunOk(
      &LpPool, Spec("LpPool", {Attribute::Ints("kernel_shape", {2}), Attribute::Int("p", 1)}), {x});
  EXPECT_TRUE(TensorsNear(y1, F32({1, 1, 3}, {7, 4, 1})));
  Tensor global = RunOk(&GlobalLpPool, Spec("GlobalLpPool", {}), {x});
  EXPECT_TRUE(TensorsNear(global, F32({1, 1, 1}, {std::sqrt(26.0f)})));
}

TEST(PoolTest, GlobalPoolsReduceEverySpatialDimension) {
  Tensor x = RandomFloats({2, 3, 5, 7, 2}, 9);
  Tensor avg = RunOk(&GlobalAveragePool, Spec("GlobalAveragePool", {}), {x});
  Tensor windowed =
      RunOk(&AveragePool, Spec("AveragePool", {Attribute::Ints("kernel_shape", {5, 7, 2})}), {x});
  EXPECT_TRUE(TensorsNear(avg, windowed));
  Tensor max = RunOk(&GlobalMaxPool, Spec("GlobalMaxPool", {}), {x});
  Tensor max_windowed =
      RunOk(&MaxPool, Spec("MaxPool", {Attribute::Ints("kernel_shape", {5, 7, 2})}), {x});
  EXPECT_TRUE(TensorsNear(max, max_windowed));
  EXPECT_EQ(max.sizes(), (std::vector<int64_t>{2, 3, 1, 1, 1}));
}

TEST(PoolTest, MissingKernelShapeNamesTheNode) {
  KernelResult r = RunNode(&MaxPool, Spec("MaxPool", {}), {RandomFloats({1, 1, 3, 3}, 1)});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("MaxPool 'node'"), std::string::npos);
  EXPECT_NE(r.status().message().find("kernel_shape"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime::nn
