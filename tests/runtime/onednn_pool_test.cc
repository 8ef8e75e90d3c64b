// oneDNN 2-D pooling against the reference tier: MaxPool and AveragePool over kernel,
// stride, pad, ceil_mode and count_include_pad sweeps; GlobalAveragePool and
// GlobalMaxPool over odd sizes; and the variants the fast path must leave alone
// (the Indices output, dilations, storage_order, ceil_mode with counted padding).
// Rank-3 and rank-5 pooling: onednn_window_nd_test.cc.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

struct PoolShape {
  std::string op = "MaxPool";
  int64_t n = 1, c = 3, h = 7, w = 7;
  std::vector<int64_t> kernel = {3, 3}, strides = {1, 1};
  std::vector<int64_t> pads;  // empty: attribute absent
  std::string auto_pad;       // empty: attribute absent
  int64_t ceil_mode = 0, count_include_pad = 0;
  Layout layout = Layout::kNhwc;
};

std::string Describe(const PoolShape& s) {
  std::string d = s.op + " " + SizesString({s.n, s.c, s.h, s.w}) + " k" + SizesString(s.kernel) +
                  " s" + SizesString(s.strides);
  if (!s.pads.empty()) d += " pads" + SizesString(s.pads);
  if (!s.auto_pad.empty()) d += " " + s.auto_pad;
  if (s.ceil_mode) d += " ceil";
  if (s.count_include_pad) d += " count_include_pad";
  return d + " " + LayoutName(s.layout);
}

KernelCase MakePoolCase(const PoolShape& s, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnPoolKernel;
  c.op_type = s.op;
  c.seed = seed;
  c.label = Describe(s);
  c.attributes = {Attribute::Ints("kernel_shape", s.kernel), Attribute::Ints("strides", s.strides),
                  Attribute::Int("ceil_mode", s.ceil_mode)};
  if (s.op == "AveragePool") {
    c.attributes.push_back(Attribute::Int("count_include_pad", s.count_include_pad));
  }
  if (!s.pads.empty()) c.attributes.push_back(Attribute::Ints("pads", s.pads));
  if (!s.auto_pad.empty()) c.attributes.push_back(Attribute::String("auto_pad", s.auto_pad));
  c.inputs = {Dynamic(RandomTensor({s.n, s.c, s.h, s.w}, rng), s.layout)};
  return c;
}

// The kernel counts padding only where oneDNN's right padding equals the attribute's:
// not with ceil_mode, and only when the windows tile the padded input exactly.
bool ExpectFastPath(const PoolShape& s) {
  if (s.op != "AveragePool" || !s.count_include_pad) return true;
  if (s.ceil_mode) return false;
  if (s.auto_pad == "SAME_UPPER" || s.auto_pad == "SAME_LOWER" || s.auto_pad == "VALID") {
    return true;
  }
  std::vector<int64_t> pads = s.pads.empty() ? std::vector<int64_t>(4, 0) : s.pads;
  return (s.h + pads[0] + pads[2] - s.kernel[0]) % s.strides[0] == 0 &&
         (s.w + pads[1] + pads[3] - s.kernel[1]) % s.strides[1] == 0;
}

TEST(OnednnPool, MaxAndAverageSweep) {
  uint32_t seed = TestSeed(3001);
  std::mt19937 rng(seed);
  const std::vector<std::vector<int64_t>> pad_options = {
      {}, {1, 1, 1, 1}, {0, 1, 1, 0}, {2, 0, 1, 2}};
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (int64_t k : {1, 2, 3, 5}) {
      for (int64_t stride : {1, 2, 3}) {
        for (const std::vector<int64_t>& pads : pad_options) {
          for (int64_t ceil_mode : {0, 1}) {
            for (int64_t count_include_pad : {0, 1}) {
              if (std::string(op) == "MaxPool" && count_include_pad) continue;
              // Padding must stay below the kernel.
              bool pads_fit = true;
              for (int64_t p : pads) pads_fit = pads_fit && p < k;
              if (!pads_fit) continue;
              PoolShape s;
              s.op = op;
              s.n = Pick(rng, {1, 2});
              s.c = Pick(rng, {1, 2, 3, 5, 7, 15, 17, 31, 33});
              s.h = std::max(k, Pick(rng, {1, 2, 3, 5, 7, 15}));
              s.w = std::max(k, Pick(rng, {2, 5, 7, 17}));
              s.kernel = {k, k};
              s.strides = {stride, stride};
              s.pads = pads;
              s.ceil_mode = ceil_mode;
              s.count_include_pad = count_include_pad;
              s.layout = rng() % 2 == 0 ? Layout::kNhwc : Layout::kPlain;
              KernelCase c = MakePoolCase(s, rng, seed);
              c.expect = ExpectFastPath(s) ? Expect::kFastPath : Expect::kNotApplicable;
              EXPECT_TRUE(CheckKernel(c));
            }
          }
        }
      }
    }
  }
}

TEST(OnednnPool, AutoPadAndNonSquareWindows) {
  uint32_t seed = TestSeed(3002);
  std::mt19937 rng(seed);
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (const char* auto_pad : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
      for (int64_t count_include_pad : {0, 1}) {
        PoolShape s;
        s.op = op;
        s.c = 17;
        s.h = 8;
        s.w = 11;
        s.kernel = {2, 3};
        s.strides = {2, 3};
        s.auto_pad = auto_pad;
        s.count_include_pad = count_include_pad;
        KernelCase c = MakePoolCase(s, rng, seed);
        c.expect = ExpectFastPath(s) ? Expect::kFastPath : Expect::kNotApplicable;
        EXPECT_TRUE(CheckKernel(c));
      }
    }
  }
}

// ceil_mode where the last window would start in the right padding: ONNX drops it.
TEST(OnednnPool, CeilModeWindowStartingInPadding) {
  uint32_t seed = TestSeed(3003);
  std::mt19937 rng(seed);
  for (const char* op : {"MaxPool", "AveragePool"}) {
    PoolShape s;
    s.op = op;
    s.h = 4;
    s.w = 6;
    s.kernel = {1, 2};
    s.strides = {2, 2};
    s.pads = {0, 0, 1, 1};
    s.ceil_mode = 1;
    EXPECT_TRUE(CheckKernel(MakePoolCase(s, rng, seed)));
  }
}

TEST(OnednnPool, GlobalPoolsOverOddSizes) {
  uint32_t seed = TestSeed(3004);
  std::mt19937 rng(seed);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    for (int64_t c : {1, 2, 3, 5, 7, 15, 17, 31, 33}) {
      for (const auto& [h, w] :
           std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 7}, {3, 5}, {7, 7}, {15, 17}}) {
        KernelCase kc;
        kc.factory = &CreateOnednnPoolKernel;
        kc.op_type = op;
        kc.seed = seed;
        int64_t n = c % 2 + 1;
        Layout layout = (c + h) % 2 == 0 ? Layout::kNhwc : Layout::kPlain;
        kc.label = SizesString({n, c, h, w}) + " " + LayoutName(layout);
        kc.inputs = {Dynamic(RandomTensor({n, c, h, w}, rng), layout)};
        EXPECT_TRUE(CheckKernel(kc));
      }
    }
  }
}

TEST(OnednnPool, LeavesUnsupportedVariantsToTheReference) {
  uint32_t seed = TestSeed(3005);
  std::mt19937 rng(seed);
  PoolShape s;
  KernelCase indices = MakePoolCase(s, rng, seed);
  indices.label += " with the Indices output";
  indices.num_outputs = 2;
  indices.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(indices));

  KernelCase dilated = MakePoolCase(s, rng, seed);
  dilated.label += " dilations 2";
  dilated.attributes.push_back(Attribute::Ints("dilations", {2, 2}));
  dilated.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(dilated));

  KernelCase column_major = MakePoolCase(s, rng, seed);
  column_major.label += " storage_order 1";
  column_major.attributes.push_back(Attribute::Int("storage_order", 1));
  column_major.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(column_major));

  s.op = "AveragePool";
  s.pads = {1, 1, 1, 1};
  s.strides = {2, 2};
  s.h = 6;
  s.ceil_mode = 1;
  s.count_include_pad = 1;
  KernelCase counted = MakePoolCase(s, rng, seed);
  counted.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(counted));

  KernelCase lp = MakePoolCase(PoolShape{}, rng, seed);
  lp.op_type = "LpPool";
  lp.label = "LpPool";
  lp.attributes.pop_back();  // ceil_mode (LpPool gained it only in opset 18)
  lp.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(lp));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
