// The problem shared by the oneDNN Conv and ConvTranspose kernel tests: sizes, window
// attributes and layout, its one-line description, and the KernelCase it makes.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {

struct WindowShape {
  int64_t n = 1, c_in = 3, c_out = 4, h = 7, w = 7, group = 1;
  std::vector<int64_t> kernel = {3, 3}, strides = {1, 1}, dilations = {1, 1};
  // Empty: the attribute is absent. output_padding and output_shape: ConvTranspose only.
  std::vector<int64_t> pads, output_padding, output_shape;
  std::string auto_pad;
  bool bias = true;
  Layout layout = Layout::kNhwc;
};

inline std::string Describe(const WindowShape& s) {
  std::string d = "N" + std::to_string(s.n) + " Cin" + std::to_string(s.c_in) + " Cout" +
                  std::to_string(s.c_out) + " " + std::to_string(s.h) + "x" + std::to_string(s.w) +
                  " k" + SizesString(s.kernel) + " s" + SizesString(s.strides) + " d" +
                  SizesString(s.dilations) + " g" + std::to_string(s.group);
  if (!s.pads.empty()) d += " pads" + SizesString(s.pads);
  if (!s.output_padding.empty()) d += " output_padding" + SizesString(s.output_padding);
  if (!s.output_shape.empty()) d += " output_shape" + SizesString(s.output_shape);
  if (!s.auto_pad.empty()) d += " " + s.auto_pad;
  return d + (s.bias ? " bias" : " no-bias") + " " + LayoutName(s.layout);
}

// A `op_type` ("Conv" or "ConvTranspose") case for `factory`: random X (dynamic, in
// s.layout), W (constant, [C_out, C_in/g, k] for Conv, [C_in, C_out/g, k] for
// ConvTranspose) and B.
inline KernelCase MakeWindowCase(const WindowShape& s, const std::string& op_type,
                                 KernelFactory factory, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = factory;
  c.op_type = op_type;
  c.seed = seed;
  c.label = Describe(s);
  c.attributes = {Attribute::Ints("kernel_shape", s.kernel), Attribute::Ints("strides", s.strides),
                  Attribute::Ints("dilations", s.dilations), Attribute::Int("group", s.group)};
  if (!s.pads.empty()) c.attributes.push_back(Attribute::Ints("pads", s.pads));
  if (!s.output_padding.empty()) {
    c.attributes.push_back(Attribute::Ints("output_padding", s.output_padding));
  }
  if (!s.output_shape.empty()) {
    c.attributes.push_back(Attribute::Ints("output_shape", s.output_shape));
  }
  if (!s.auto_pad.empty()) c.attributes.push_back(Attribute::String("auto_pad", s.auto_pad));
  const bool transposed = op_type == "ConvTranspose";
  const std::vector<int64_t> w = {transposed ? s.c_in : s.c_out,
                                  (transposed ? s.c_out : s.c_in) / s.group, s.kernel[0],
                                  s.kernel[1]};
  c.inputs = {Dynamic(RandomTensor({s.n, s.c_in, s.h, s.w}, rng), s.layout),
              Constant(RandomTensor(w, rng))};
  if (s.bias) c.inputs.push_back(Constant(RandomTensor({s.c_out}, rng)));
  return c;
}

}  // namespace qtune::runtime::kernel_testing
