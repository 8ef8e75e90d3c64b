// The upsampling ConvTranspose kernel (kernel == stride, onednn_upsample_deconv.cc) against
// the reference tier: both product forms (narrow: fewer than 16 columns kH*kW*C_out, wide:
// the rest), square and rectangular kernels, batches, odd sizes, with and without bias; and
// the ConvTranspose variants it must leave to the general deconvolution kernel.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

#include "runtime/kernel_test_util.h"
#include "runtime/window_case.h"

namespace qtune::runtime::kernel_testing {
namespace {

KernelCase MakeUpsampleCase(const WindowShape& s, std::mt19937& rng, uint32_t seed) {
  return MakeWindowCase(s, "ConvTranspose", &CreateOnednnUpsampleDeconvKernel, rng, seed);
}

WindowShape Upsample(int64_t c_in, int64_t c_out, std::vector<int64_t> kernel) {
  WindowShape s;
  s.c_in = c_in;
  s.c_out = c_out;
  s.kernel = kernel;
  s.strides = kernel;
  return s;
}

TEST(OnednnUpsampleDeconv, NarrowAndWideProductsMatchTheReference) {
  uint32_t seed = TestSeed(2101);
  std::mt19937 rng(seed);
  const std::vector<std::vector<int64_t>> kernels = {{2, 2}, {1, 1}, {3, 3}, {2, 3}, {4, 1}};
  for (const std::vector<int64_t>& kernel : kernels) {
    for (int64_t c_in : {1, 3, 24, 33}) {
      for (int64_t c_out : {1, 2, 5, 24}) {
        WindowShape s = Upsample(c_in, c_out, kernel);
        s.n = 1 + static_cast<int64_t>(rng() % 2);
        s.h = 1 + static_cast<int64_t>(rng() % 9);
        s.w = 1 + static_cast<int64_t>(rng() % 11);
        s.bias = rng() % 2 == 0;
        s.layout = rng() % 2 == 0 ? Layout::kNhwc : Layout::kPlain;
        KernelCase c = MakeUpsampleCase(s, rng, seed);
        c.expect = Expect::kFastPath;
        EXPECT_TRUE(CheckKernel(c));
      }
    }
  }
}

// PP-OCRv4 det's two heads at 320x320 input: several bands of rows per run.
TEST(OnednnUpsampleDeconv, DetectionHeadSizes) {
  uint32_t seed = TestSeed(2102);
  std::mt19937 rng(seed);
  for (auto [c_in, c_out, h] : std::vector<std::array<int64_t, 3>>{{24, 24, 80}, {24, 1, 160}}) {
    WindowShape s = Upsample(c_in, c_out, {2, 2});
    s.h = h;
    s.w = h;
    KernelCase c = MakeUpsampleCase(s, rng, seed);
    c.expect = Expect::kFastPath;
    EXPECT_TRUE(CheckKernel(c));
  }
}

TEST(OnednnUpsampleDeconv, LeavesOtherDeconvolutionsAlone) {
  uint32_t seed = TestSeed(2103);
  std::mt19937 rng(seed);
  auto expect_not_applicable = [&](WindowShape s, const char* why) {
    KernelCase c = MakeUpsampleCase(s, rng, seed);
    c.label = why;
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c)) << why;
  };
  WindowShape overlapping = Upsample(4, 4, {3, 3});
  overlapping.strides = {2, 2};
  expect_not_applicable(overlapping, "stride below the kernel: windows overlap");
  WindowShape padded = Upsample(4, 4, {2, 2});
  padded.pads = {1, 1, 1, 1};
  expect_not_applicable(padded, "pads");
  WindowShape grouped = Upsample(4, 4, {2, 2});
  grouped.group = 2;
  expect_not_applicable(grouped, "group 2");
  WindowShape output_padding = Upsample(4, 4, {2, 2});
  output_padding.output_padding = {1, 1};
  output_padding.pads = {0, 0, 1, 1};
  expect_not_applicable(output_padding, "output_padding");
  WindowShape dilated = Upsample(4, 4, {2, 2});
  dilated.dilations = {2, 2};
  expect_not_applicable(dilated, "dilations");
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
