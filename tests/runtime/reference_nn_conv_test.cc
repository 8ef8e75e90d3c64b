// Conv reference kernel: hand-computed cases, ONNX node tests, and cross-checks against
// independent formulations (im2col + GEMM, per-group split, 3-D as a sum of 2-D).
#include <gtest/gtest.h>

#include "reference_nn_test_util.h"
#include "runtime/reference/nn_util.h"

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

testing::NodeSpecForTest ConvSpec(std::vector<Attribute> attributes) {
  return {.op_type = "Conv", .attributes = std::move(attributes)};
}

TEST(ConvTest, HandComputed2x2OnesKernel) {
  Tensor x = F32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = F32({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor b = F32({1}, {0.5f});
  Tensor y = RunOk(&Conv, ConvSpec({}), {x, w, b});
  EXPECT_TRUE(TensorsNear(y, F32({1, 1, 2, 2}, {8.5f, 12.5f, 20.5f, 24.5f})));
}

TEST(ConvTest, HandComputedDilatedStridedPadded1d) {
  // x = [1 2 3 4 5], w = [1 10], dilation 2, stride 2, pads (1, 1): padded x = 0 1 2 3 4 5 0.
  // Windows start at 0, 2, 4: 0*1+2*10, 2*1+4*10, 4*1+0*10.
  Tensor x = F32({1, 1, 5}, {1, 2, 3, 4, 5});
  Tensor w = F32({1, 1, 2}, {1, 10});
  Tensor y = RunOk(&Conv,
                   ConvSpec({Attribute::Ints("dilations", {2}), Attribute::Ints("strides", {2}),
                             Attribute::Ints("pads", {1, 1})}),
                   {x, w, Tensor()});
  EXPECT_TRUE(TensorsNear(y, F32({1, 1, 3}, {20, 42, 4})));
}

TEST(ConvTest, OnnxNodeTests) {
  for (const char* name :
       {"test_basic_conv_with_padding", "test_basic_conv_without_padding",
        "test_conv_with_autopad_same", "test_conv_with_strides_and_asymmetric_padding",
        "test_conv_with_strides_no_padding", "test_conv_with_strides_padding"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &Conv);
  }
}

// Independent formulation: im2col then a naive GEMM, 2-D, group 1.
struct Conv2dParams {
  int64_t n, c, h, w, m, kh, kw, stride_h, stride_w, dil_h, dil_w;
  int64_t pad_t, pad_l, pad_b, pad_r;
};

Tensor Im2ColConv(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor& b) {
  const int64_t oh = (p.h + p.pad_t + p.pad_b - ((p.kh - 1) * p.dil_h + 1)) / p.stride_h + 1;
  const int64_t ow = (p.w + p.pad_l + p.pad_r - ((p.kw - 1) * p.dil_w + 1)) / p.stride_w + 1;
  const int64_t rows = p.c * p.kh * p.kw;
  Tensor y = *Tensor::Allocate(DataType::kFloat32, {p.n, p.m, oh, ow});
  std::vector<double> cols(rows * oh * ow);
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t i = 0; i < p.kh; ++i)
        for (int64_t j = 0; j < p.kw; ++j)
          for (int64_t r = 0; r < oh; ++r)
            for (int64_t s = 0; s < ow; ++s) {
              int64_t hi = r * p.stride_h - p.pad_t + i * p.dil_h;
              int64_t wi = s * p.stride_w - p.pad_l + j * p.dil_w;
              bool in = hi >= 0 && hi < p.h && wi >= 0 && wi < p.w;
              cols[((c * p.kh + i) * p.kw + j) * oh * ow + r * ow + s] =
                  in ? x.data<float>()[((n * p.c + c) * p.h + hi) * p.w + wi] : 0.0;
            }
    for (int64_t m = 0; m < p.m; ++m)
      for (int64_t q = 0; q < oh * ow; ++q) {
        double acc = b.data<float>()[m];
        for (int64_t k = 0; k < rows; ++k)
          acc += w.data<float>()[m * rows + k] * cols[k * oh * ow + q];
        y.data<float>()[(n * p.m + m) * oh * ow + q] = static_cast<float>(acc);
      }
  }
  return y;
}

TEST(ConvTest, MatchesIm2ColGemmOverOddSizes) {
  uint32_t seed = 1;
  for (int64_t size : {1, 2, 3, 5, 7, 15, 17}) {
    for (int64_t k : {1, 2, 3}) {
      for (int64_t stride : {1, 2, 3}) {
        for (int64_t dil : {1, 2}) {
          Conv2dParams p{.n = 2,
                         .c = 3,
                         .h = size,
                         .w = size + 2,
                         .m = 5,
                         .kh = k,
                         .kw = k + 1,
                         .stride_h = stride,
                         .stride_w = 1,
                         .dil_h = dil,
                         .dil_w = 1,
                         .pad_t = 1,
                         .pad_l = 0,
                         .pad_b = 2,
                         .pad_r = 1};
          if (p.h + 3 < (k - 1) * dil + 1 || p.w + 1 < k + 1) continue;
          SCOPED_TRACE("seed " + std::to_string(seed) + " size " + std::to_string(size));
          Tensor x = RandomFloats({p.n, p.c, p.h, p.w}, seed++);
          Tensor w = RandomFloats({p.m, p.c, p.kh, p.kw}, seed++);
          Tensor b = RandomFloats({p.m}, seed++);
          Tensor y = RunOk(&Conv,
                           ConvSpec({Attribute::Ints("strides", {stride, 1}),
                                     Attribute::Ints("dilations", {dil, 1}),
                                     Attribute::Ints("pads", {1, 0, 2, 1})}),
                           {x, w, b});
          EXPECT_TRUE(TensorsNear(y, Im2ColConv(p, x, w, b), 1e-5, 1e-5));
        }
      }
    }
  }
}

// Slices channels [begin, begin + count) of an NCHW... tensor.
Tensor SliceChannels(const Tensor& t, int64_t begin, int64_t count) {
  std::vector<int64_t> sizes = t.sizes();
  const int64_t inner = Product(sizes, 2, sizes.size());
  const int64_t channels = sizes[1];
  sizes[1] = count;
  Tensor out = *Tensor::Allocate(t.dtype(), sizes);
  for (int64_t n = 0; n < sizes[0]; ++n)
    for (int64_t c = 0; c < count; ++c)
      for (int64_t i = 0; i < inner; ++i)
        out.data<float>()[(n * count + c) * inner + i] =
            t.data<float>()[(n * channels + begin + c) * inner + i];
  return out;
}

Tensor SliceRows(const Tensor& t, int64_t begin, int64_t count) {
  std::vector<int64_t> sizes = t.sizes();
  const int64_t inner = Product(sizes, 1, sizes.size());
  sizes[0] = count;
  Tensor out = *Tensor::Allocate(t.dtype(), sizes);
  for (int64_t i = 0; i < count * inner; ++i)
    out.data<float>()[i] = t.data<float>()[begin * inner + i];
  return out;
}

TEST(ConvTest, GroupedEqualsPerGroupConvolutions) {
  uint32_t seed = 100;
  // {channels_in, channels_out, group}; group == channels_in is depthwise.
  for (auto [c, m, group] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {4, 6, 2}, {6, 6, 3}, {5, 5, 5}, {3, 6, 3}, {8, 4, 4}}) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " group " + std::to_string(group));
    std::vector<Attribute> attrs = {Attribute::Ints("strides", {2, 1}),
                                    Attribute::Ints("pads", {1, 1, 1, 1}),
                                    Attribute::Ints("dilations", {1, 2})};
    Tensor x = RandomFloats({2, c, 7, 5}, seed++);
    Tensor w = RandomFloats({m, c / group, 3, 2}, seed++);
    Tensor b = RandomFloats({m}, seed++);
    std::vector<Attribute> grouped = attrs;
    grouped.push_back(Attribute::Int("group", group));
    Tensor y = RunOk(&Conv, ConvSpec(grouped), {x, w, b});
    const int64_t mg = m / group;
    for (int64_t g = 0; g < group; ++g) {
      Tensor part = RunOk(&Conv, ConvSpec(attrs),
                          {SliceChannels(x, g * (c / group), c / group), SliceRows(w, g * mg, mg),
                           SliceRows(b, g * mg, mg)});
      EXPECT_TRUE(TensorsNear(SliceChannels(y, g * mg, mg), part)) << "group " << g;
    }
  }
}

TEST(ConvTest, OneDimensionalEqualsTwoDimensionalWithUnitHeight) {
  Tensor x = RandomFloats({2, 3, 17}, 7);
  Tensor w = RandomFloats({4, 3, 5}, 8);
  Tensor b = RandomFloats({4}, 9);
  Tensor y1 = RunOk(&Conv,
                    ConvSpec({Attribute::Ints("strides", {3}), Attribute::Ints("pads", {2, 1}),
                              Attribute::Ints("dilations", {2})}),
                    {x, w, b});
  Tensor y2 =
      RunOk(&Conv,
            ConvSpec({Attribute::Ints("strides", {1, 3}), Attribute::Ints("pads", {0, 2, 0, 1}),
                      Attribute::Ints("dilations", {1, 2})}),
            {*x.Reshaped({2, 3, 1, 17}), *w.Reshaped({4, 3, 1, 5}), b});
  EXPECT_TRUE(TensorsNear(*y1.Reshaped(y2.sizes()), y2));
}

TEST(ConvTest, ThreeDimensionalEqualsSumOfTwoDimensionalSlices) {
  const int64_t d = 5, kd = 2, dil_d = 2;
  Tensor x = RandomFloats({1, 2, d, 6, 5}, 11);
  Tensor w = RandomFloats({3, 2, kd, 3, 3}, 12);
  Tensor y = RunOk(&Conv,
                   ConvSpec({Attribute::Ints("dilations", {dil_d, 1, 1}),
                             Attribute::Ints("pads", {0, 1, 1, 0, 1, 1})}),
                   {x, w});
  const int64_t od = d - (kd - 1) * dil_d;
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 3, od, 6, 5}));
  auto depth_slice = [](const Tensor& t, int64_t z) {
    const std::vector<int64_t>& s = t.sizes();
    Tensor out = *Tensor::Allocate(DataType::kFloat32, {s[0], s[1], s[3], s[4]});
    const int64_t plane = s[3] * s[4];
    for (int64_t nc = 0; nc < s[0] * s[1]; ++nc)
      for (int64_t i = 0; i < plane; ++i)
        out.data<float>()[nc * plane + i] = t.data<float>()[(nc * s[2] + z) * plane + i];
    return out;
  };
  for (int64_t z = 0; z < od; ++z) {
    std::vector<double> sum(3 * 6 * 5, 0.0);
    for (int64_t k = 0; k < kd; ++k) {
      Tensor part = RunOk(&Conv, ConvSpec({Attribute::Ints("pads", {1, 1, 1, 1})}),
                          {depth_slice(x, z + k * dil_d), depth_slice(w, k)});
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += part.data<float>()[i];
    }
    std::vector<float> expected(sum.begin(), sum.end());
    EXPECT_TRUE(TensorsNear(depth_slice(y, z), F32({1, 3, 6, 5}, expected))) << "depth " << z;
  }
}

TEST(ConvTest, AutoPadEqualsExplicitPads) {
  Tensor x = RandomFloats({1, 2, 5, 6}, 21);
  Tensor w = RandomFloats({3, 2, 4, 3}, 22);
  // H: in 5, k 4, stride 2 -> out 3, total pad 2*2+4-5 = 3. W: in 6, k 3, stride 2 -> out 3,
  // total pad 2*2+3-6 = 1. SAME_UPPER puts the odd pixel at the end, SAME_LOWER at the start.
  struct Case {
    const char* auto_pad;
    std::vector<int64_t> pads;
  };
  for (const Case& c : {Case{"SAME_UPPER", {1, 0, 2, 1}}, Case{"SAME_LOWER", {2, 1, 1, 0}},
                        Case{"VALID", {0, 0, 0, 0}}}) {
    SCOPED_TRACE(c.auto_pad);
    Tensor automatic = RunOk(
        &Conv,
        ConvSpec({Attribute::String("auto_pad", c.auto_pad), Attribute::Ints("strides", {2, 2})}),
        {x, w});
    Tensor manual = RunOk(
        &Conv, ConvSpec({Attribute::Ints("pads", c.pads), Attribute::Ints("strides", {2, 2})}),
        {x, w});
    EXPECT_TRUE(TensorsNear(automatic, manual));
  }
}

TEST(ConvTest, Float64MatchesFloat32) {
  Tensor x = RandomFloats({1, 3, 7, 7}, 31);
  Tensor w = RandomFloats({2, 3, 3, 3}, 32);
  auto to_double = [](const Tensor& t) {
    Tensor d = *Tensor::Allocate(DataType::kFloat64, t.sizes());
    for (int64_t i = 0; i < t.num_elements(); ++i) d.data<double>()[i] = t.data<float>()[i];
    return d;
  };
  Tensor y32 = RunOk(&Conv, ConvSpec({Attribute::Ints("pads", {1, 1, 1, 1})}), {x, w});
  Tensor y64 =
      RunOk(&Conv, ConvSpec({Attribute::Ints("pads", {1, 1, 1, 1})}), {to_double(x), to_double(w)});
  EXPECT_TRUE(TensorsNear(to_double(y32), y64, 1e-6, 1e-6));
}

TEST(ConvTest, ErrorsNameTheNodeAndTheProblem) {
  Tensor x = RandomFloats({1, 4, 5, 5}, 41);
  auto run = [&](const Tensor& w, std::vector<Attribute> attrs) {
    return RunNode(&Conv, ConvSpec(std::move(attrs)), {x, w});
  };
  auto channels = run(RandomFloats({2, 3, 3, 3}, 42), {});
  EXPECT_EQ(channels.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(channels.status().message().find("Conv 'node'"), std::string::npos);
  auto kernel = run(RandomFloats({2, 4, 3, 3}, 43), {Attribute::Ints("kernel_shape", {2, 2})});
  EXPECT_NE(kernel.status().message().find("kernel_shape"), std::string::npos);
  auto group = run(RandomFloats({2, 4, 3, 3}, 44), {Attribute::Int("group", 3)});
  EXPECT_NE(group.status().message().find("group"), std::string::npos);
  auto auto_pad = run(RandomFloats({2, 4, 3, 3}, 45), {Attribute::String("auto_pad", "SAME")});
  EXPECT_NE(auto_pad.status().message().find("auto_pad"), std::string::npos);
  auto too_big = run(RandomFloats({2, 4, 7, 3}, 46), {});
  EXPECT_EQ(too_big.status().code(), StatusCode::kInvalidArgument);
  auto strides = run(RandomFloats({2, 4, 3, 3}, 47), {Attribute::Ints("strides", {1})});
  EXPECT_NE(strides.status().message().find("strides"), std::string::npos);
  Tensor ints = Tensor::FromVector<int32_t>({1, 1, 1, 1}, {1});
  auto dtype = RunNode(&Conv, ConvSpec({}), {ints, ints});
  EXPECT_EQ(dtype.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace qtune::runtime::nn
