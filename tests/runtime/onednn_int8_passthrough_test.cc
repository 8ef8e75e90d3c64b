// The QDQ fusion runs pools and data-movement ops directly on uint8/int8 tensors; their
// oneDNN kernels against the reference tier on those types: MaxPool (exact), AveragePool
// and GlobalAveragePool (rounded half to even; the reference multiplies by the reciprocal
// count as oneDNN does, so exact as well), Concat, Transpose, nearest Resize, and the
// layout reorder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/kernel_test_util.h"
#include "runtime/quant_test_tensors.h"

namespace qtune::runtime::kernel_testing {
namespace {

constexpr DataType kU8 = DataType::kUint8;
constexpr DataType kS8 = DataType::kInt8;
constexpr DataType kInt8Types[] = {kU8, kS8};

std::string TypeName(DataType t) { return std::string(DataTypeName(t)); }

struct PoolCase {
  std::string op;
  std::vector<int64_t> x;
  std::vector<int64_t> kernel = {3, 3}, strides = {1, 1}, pads = {0, 0, 0, 0};
  int64_t count_include_pad = 0, ceil_mode = 0;
};

KernelCase MakePool(const PoolCase& p, DataType dtype, Layout layout, std::mt19937& rng,
                    uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnPoolKernel;
  c.op_type = p.op;
  c.seed = seed;
  c.tolerance = 0;
  c.label = p.op + " " + TypeName(dtype) + " " + SizesString(p.x) + " " + LayoutName(layout);
  if (p.op == "MaxPool" || p.op == "AveragePool") {
    c.attributes = {Attribute::Ints("kernel_shape", p.kernel),
                    Attribute::Ints("strides", p.strides), Attribute::Ints("pads", p.pads),
                    Attribute::Int("ceil_mode", p.ceil_mode)};
    c.label += " k" + SizesString(p.kernel) + " s" + SizesString(p.strides) + " pads" +
               SizesString(p.pads) + (p.ceil_mode ? " ceil" : "");
  }
  if (p.op == "AveragePool") {
    c.attributes.push_back(Attribute::Int("count_include_pad", p.count_include_pad));
    c.label += p.count_include_pad ? " count_include_pad" : "";
  }
  c.inputs = {Dynamic(RandomQuantTensor(dtype, p.x, rng), layout)};
  return c;
}

std::vector<PoolCase> WindowedPools(const std::string& op) {
  std::vector<PoolCase> cases;
  for (int64_t c : {1, 3, 17, 33}) {
    cases.push_back({op, {1, c, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}});
    cases.push_back({op, {2, c, 9, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}});
    cases.push_back({op, {1, c, 6, 11}, {3, 2}, {1, 2}, {0, 1, 1, 0}});
    PoolCase ceil{op, {1, c, 8, 8}, {3, 3}, {2, 2}, {0, 0, 0, 0}};
    ceil.ceil_mode = 1;
    cases.push_back(ceil);
  }
  return cases;
}

TEST(OnednnInt8Pool, MaxPoolIsExact) {
  uint32_t seed = TestSeed(8301);
  std::mt19937 rng(seed);
  for (DataType t : kInt8Types) {
    for (const PoolCase& p : WindowedPools("MaxPool")) {
      for (Layout layout : {Layout::kNhwc, Layout::kPlain}) {
        EXPECT_TRUE(CheckKernel(MakePool(p, t, layout, rng, seed)));
      }
    }
  }
}

TEST(OnednnInt8Pool, AveragePoolMatchesReference) {
  uint32_t seed = TestSeed(8302);
  std::mt19937 rng(seed);
  for (DataType t : kInt8Types) {
    for (PoolCase p : WindowedPools("AveragePool")) {
      for (int64_t include_pad : {0, 1}) {
        p.count_include_pad = include_pad;
        KernelCase c = MakePool(p, t, Layout::kNhwc, rng, seed);
        // Counted padding runs fast only where oneDNN's right padding equals the
        // attribute's (as for float32).
        if (include_pad) c.expect = Expect::kFastPathIfSupported;
        EXPECT_TRUE(CheckKernel(c));
      }
    }
  }
}

TEST(OnednnInt8Pool, GlobalAveragePoolMatchesReference) {
  uint32_t seed = TestSeed(8303);
  std::mt19937 rng(seed);
  for (DataType t : kInt8Types) {
    for (const std::vector<int64_t>& x : std::vector<std::vector<int64_t>>{
             {1, 17, 7, 7}, {2, 3, 13, 11}, {1, 64, 1, 1}, {1, 33, 2, 3}, {1, 5, 56, 56}}) {
      for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
        PoolCase p{op, x};
        EXPECT_TRUE(CheckKernel(MakePool(p, t, Layout::kNhwc, rng, seed)));
      }
    }
  }
}

// Window sums whose mean is an exact tie (91 / 14 = 6.5) or just off one, where rounding
// sum * (1 / count) and sum / count can differ: both tiers must still agree.
TEST(OnednnInt8Pool, AverageTiesAgreeWithOnednn) {
  for (const auto& [h, w, sums] : std::vector<std::tuple<int64_t, int64_t, std::vector<int>>>{
           {2, 7, {91, 175, 203, 315, 105, 119}}, {5, 6, {75, 195, 315, 375, 45, 105}}}) {
    const int64_t channels = static_cast<int64_t>(sums.size());
    for (DataType t : kInt8Types) {
      // Plane c holds values adding up to sums[c] (spread over the plane, <= 127 each).
      auto x = Tensor::Allocate(t, {1, channels, h, w});
      ASSERT_TRUE(x.ok());
      for (int64_t c = 0; c < channels; ++c) {
        int remaining = sums[c];
        for (int64_t i = 0; i < h * w; ++i) {
          int v = std::min(remaining, 127);
          remaining -= v;
          if (t == kU8) x->data<uint8_t>()[c * h * w + i] = static_cast<uint8_t>(v);
          if (t == kS8) x->data<int8_t>()[c * h * w + i] = static_cast<int8_t>(v);
        }
      }
      for (const char* op : {"GlobalAveragePool", "AveragePool"}) {
        KernelCase c;
        c.factory = &CreateOnednnPoolKernel;
        c.op_type = op;
        c.tolerance = 0;
        if (std::string(op) == "AveragePool") {
          c.attributes = {Attribute::Ints("kernel_shape", {h, w})};
        }
        c.label = std::string(op) + " ties " + TypeName(t) + " " + SizesString({h, w});
        c.inputs = {Dynamic(*x, Layout::kNhwc)};
        EXPECT_TRUE(CheckKernel(c));
      }
    }
  }
}

TEST(OnednnInt8Concat, AlongEveryAxis) {
  uint32_t seed = TestSeed(8304);
  std::mt19937 rng(seed);
  for (DataType t : kInt8Types) {
    for (int64_t axis : {0, 1, 2, 3, -3}) {
      KernelCase c;
      c.factory = &CreateOnednnConcatKernel;
      c.op_type = "Concat";
      c.seed = seed;
      c.tolerance = 0;
      c.attributes = {Attribute::Int("axis", axis)};
      c.label = TypeName(t) + " axis " + std::to_string(axis);
      int64_t a = axis < 0 ? axis + 4 : axis;
      for (int64_t extent : {3, 1, 17}) {
        std::vector<int64_t> sizes = {2, 5, 3, 7};
        sizes[a] = extent;
        c.inputs.push_back(Dynamic(RandomQuantTensor(t, sizes, rng), Layout::kNhwc));
      }
      EXPECT_TRUE(CheckKernel(c));
    }
  }
}

TEST(OnednnInt8Transpose, PermutationsOfRank3And4) {
  uint32_t seed = TestSeed(8306);
  std::mt19937 rng(seed);
  for (DataType t : kInt8Types) {
    for (const auto& [sizes, perm] :
         std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{2, 5, 7, 3}, {0, 2, 1, 3}},
             {{2, 5, 7, 3}, {0, 3, 1, 2}},
             {{1, 17, 3, 33}, {3, 2, 1, 0}},
             {{5, 1, 31}, {2, 0, 1}},
             {{4, 6, 9}, {1, 0, 2}}}) {
      KernelCase c;
      c.factory = &CreateOnednnTransposeKernel;
      c.op_type = "Transpose";
      c.seed = seed;
      c.tolerance = 0;
      c.attributes = {Attribute::Ints("perm", perm)};
      c.label = TypeName(t) + " " + SizesString(sizes) + " perm " + SizesString(perm);
      c.inputs = {Dynamic(RandomQuantTensor(t, sizes, rng))};
      c.expect = Expect::kFastPath;
      EXPECT_TRUE(CheckKernel(c));
    }
  }
}

KernelCase MakeResize(DataType t, const std::vector<int64_t>& x, std::vector<float> scales,
                      const std::string& mode, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnResizeKernel;
  c.op_type = "Resize";
  c.seed = seed;
  c.tolerance = 0;
  c.attributes = {Attribute::String("mode", mode),
                  Attribute::String("coordinate_transformation_mode", "asymmetric"),
                  Attribute::String("nearest_mode", "floor")};
  c.label = TypeName(t) + " " + SizesString(x) + " " + mode;
  for (float s : scales) c.label += " " + std::to_string(s);
  c.inputs = {Dynamic(RandomQuantTensor(t, x, rng), Layout::kNhwc), Omitted(),
              Constant(Tensor::FromVector<float>({4}, scales))};
  return c;
}

TEST(OnednnInt8Resize, NearestIntegerUpscale) {
  uint32_t seed = TestSeed(8307);
  std::mt19937 rng(seed);
  for (DataType t : kInt8Types) {
    for (const std::vector<int64_t>& x :
         std::vector<std::vector<int64_t>>{{1, 3, 4, 5}, {2, 17, 3, 3}, {1, 33, 1, 7}}) {
      for (const std::vector<float>& scales :
           std::vector<std::vector<float>>{{1, 1, 2, 2}, {1, 1, 3, 2}}) {
        EXPECT_TRUE(CheckKernel(MakeResize(t, x, scales, "nearest", rng, seed)));
      }
    }
  }
}

TEST(OnednnInt8Resize, LinearIsLeftToTheReference) {
  uint32_t seed = TestSeed(8308);
  std::mt19937 rng(seed);
  KernelCase c = MakeResize(kU8, {1, 3, 4, 5}, {1, 1, 2, 2}, "linear", rng, seed);
  c.attributes[1] = Attribute::String("coordinate_transformation_mode", "half_pixel");
  c.expect = Expect::kNotApplicable;
  // The reference resizes integers only with nearest; the factory must decline all the same.
  ::testing::AssertionResult r = CheckKernel(c);
  if (!r) {
    EXPECT_NE(std::string(r.message()).find("reference failed"), std::string::npos) << r.message();
  }
}

TEST(Int8Reorder, PlainToNhwcAndBack) {
  uint32_t seed = TestSeed(8309);
  std::mt19937 rng(seed);
  for (DataType t : kInt8Types) {
    const std::vector<int64_t> sizes = {2, 17, 3, 5};
    Tensor plain = RandomQuantTensor(t, sizes, rng);
    Tensor nhwc = ToLayout(plain, Layout::kNhwc);
    auto to_nhwc = CreateReorderKernel(t, sizes, Layout::kPlain, Layout::kNhwc);
    auto to_plain = CreateReorderKernel(t, sizes, Layout::kNhwc, Layout::kPlain);
    ASSERT_TRUE(to_nhwc.ok() && to_plain.ok()) << to_nhwc.status().ToString();
    auto out = Tensor::Allocate(t, nhwc.sizes());
    auto back = Tensor::Allocate(t, sizes);
    ASSERT_TRUE(out.ok() && back.ok());
    std::vector<Tensor> in = {plain}, outs = {*out};
    ASSERT_TRUE((*to_nhwc)->Run(in, outs).ok());
    EXPECT_EQ(std::memcmp(out->raw_data(), nhwc.raw_data(), nhwc.byte_size()), 0) << TypeName(t);
    in = {*out};
    outs = {*back};
    ASSERT_TRUE((*to_plain)->Run(in, outs).ok());
    EXPECT_EQ(std::memcmp(back->raw_data(), plain.raw_data(), plain.byte_size()), 0) << TypeName(t);
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
