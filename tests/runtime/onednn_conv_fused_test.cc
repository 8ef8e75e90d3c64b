// qtune::FusedConv on the oneDNN convolution (bias, residual Sum, activation and
// post_linear as post-ops) against its reference kernel: every activation with and
// without post_linear and the Sum input, the Sum updated in place, and activations
// oneDNN cannot express.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

struct FusedShape {
  int64_t n = 1, c_in = 5, c_out = 17, h = 7, w = 9, k = 3, stride = 1, group = 1;
  std::string activation;
  std::vector<float> params;
  std::vector<float> post_linear;  // empty: attribute absent
  bool bias = true;
  bool sum = false;
  Layout layout = Layout::kNhwc;
};

std::string Describe(const FusedShape& s) {
  std::string d = "act '" + s.activation + "' params{";
  for (float p : s.params) d += std::to_string(p) + ",";
  d += "}";
  if (!s.post_linear.empty()) {
    d += " post_linear{" + std::to_string(s.post_linear[0]) + "," +
         std::to_string(s.post_linear[1]) + "}";
  }
  return d + (s.sum ? " +sum" : "") + (s.bias ? " bias" : "") + " N" + std::to_string(s.n) +
         " Cin" + std::to_string(s.c_in) + " Cout" + std::to_string(s.c_out) + " k" +
         std::to_string(s.k) + " s" + std::to_string(s.stride) + " g" + std::to_string(s.group) +
         " " + LayoutName(s.layout);
}

KernelCase MakeFusedCase(const FusedShape& s, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateOnednnConvKernel;
  c.op_type = "FusedConv";
  c.domain = kQtuneDomain;
  c.seed = seed;
  c.label = Describe(s);
  int64_t pad = s.k / 2;
  c.attributes = {Attribute::Ints("kernel_shape", {s.k, s.k}),
                  Attribute::Ints("strides", {s.stride, s.stride}),
                  Attribute::Ints("pads", {pad, pad, pad, pad}), Attribute::Int("group", s.group),
                  Attribute::String("activation", s.activation)};
  if (!s.params.empty()) c.attributes.push_back(Attribute::Floats("activation_params", s.params));
  if (!s.post_linear.empty())
    c.attributes.push_back(Attribute::Floats("post_linear", s.post_linear));
  // Small weights keep pre-activations around [-3, 3], where the activations bend.
  c.inputs = {Dynamic(RandomTensor({s.n, s.c_in, s.h, s.w}, rng), s.layout),
              Constant(RandomTensor({s.c_out, s.c_in / s.group, s.k, s.k}, rng, -0.3f, 0.3f))};
  c.inputs.push_back(s.bias ? Constant(RandomTensor({s.c_out}, rng)) : Omitted());
  if (s.sum) {
    int64_t h_out = (s.h + 2 * pad - s.k) / s.stride + 1;
    int64_t w_out = (s.w + 2 * pad - s.k) / s.stride + 1;
    c.inputs.push_back(Dynamic(RandomTensor({s.n, s.c_out, h_out, w_out}, rng), s.layout));
  }
  return c;
}

struct NamedActivation {
  std::string op;
  std::vector<float> params;
};

const std::vector<NamedActivation>& AllActivations() {
  static const std::vector<NamedActivation> kAll = {{"", {}},
                                                    {"Relu", {}},
                                                    {"LeakyRelu", {}},
                                                    {"LeakyRelu", {0.2f}},
                                                    {"Clip", {0.0f, 6.0f}},
                                                    {"Clip", {-0.5f, 0.75f}},
                                                    {"Clip", {0.0f}},  // min only: max is +inf
                                                    {"Sigmoid", {}},
                                                    {"HardSigmoid", {}},
                                                    {"HardSigmoid", {0.3f, 0.4f}},
                                                    {"HardSwish", {}},
                                                    {"Tanh", {}}};
  return kAll;
}

TEST(OnednnFusedConv, EveryActivationWithAndWithoutSumAndPostLinear) {
  uint32_t seed = TestSeed(1101);
  std::mt19937 rng(seed);
  for (const NamedActivation& a : AllActivations()) {
    for (bool sum : {false, true}) {
      for (bool post_linear : {false, true}) {
        FusedShape s;
        s.activation = a.op;
        s.params = a.params;
        s.sum = sum;
        if (post_linear) s.post_linear = {0.5f, -0.25f};
        s.bias = rng() % 4 != 0;
        s.layout = rng() % 2 == 0 ? Layout::kNhwc : Layout::kPlain;
        EXPECT_TRUE(CheckKernel(MakeFusedCase(s, rng, seed)));
      }
    }
  }
}

TEST(OnednnFusedConv, SizesSweepWithResidualSum) {
  uint32_t seed = TestSeed(1102);
  std::mt19937 rng(seed);
  for (int64_t c_out : {1, 2, 3, 5, 7, 15, 17, 31, 33}) {
    FusedShape s;
    s.n = c_out % 2 + 1;
    s.c_in = std::vector<int64_t>{1, 3, 16, 17}[c_out % 4];
    s.c_out = c_out;
    s.k = std::vector<int64_t>{1, 3, 5}[c_out % 3];
    s.stride = c_out % 2 + 1;
    s.h = 5 + c_out % 7;
    s.w = 3 + c_out % 11;
    const NamedActivation& a = AllActivations()[c_out % AllActivations().size()];
    s.activation = a.op;
    s.params = a.params;
    s.sum = true;
    s.post_linear = {2.0f, 1.0f};
    EXPECT_TRUE(CheckKernel(MakeFusedCase(s, rng, seed)));
  }
}

TEST(OnednnFusedConv, DepthwiseWithActivation) {
  uint32_t seed = TestSeed(1103);
  std::mt19937 rng(seed);
  for (int64_t c : {3, 16, 17, 33}) {
    FusedShape s;
    s.c_in = s.c_out = s.group = c;
    s.activation = "Clip";
    s.params = {0.0f, 6.0f};
    s.stride = c % 2 + 1;
    s.sum = c % 3 == 0;
    EXPECT_TRUE(CheckKernel(MakeFusedCase(s, rng, seed)));
  }
}

// A planner may give the residual's buffer to the output: Y = act(conv(X) + Y).
TEST(OnednnFusedConv, SumInputSharedWithTheOutput) {
  uint32_t seed = TestSeed(1104);
  std::mt19937 rng(seed);
  for (const char* activation : {"", "Relu", "HardSwish"}) {
    FusedShape s;
    s.activation = activation;
    s.sum = true;
    KernelCase c = MakeFusedCase(s, rng, seed);
    c.in_place_input = static_cast<int>(kFusedConvSumInput);
    c.label += " in place";
    EXPECT_TRUE(CheckKernel(c));
  }
}

TEST(OnednnFusedConv, ActivationsWithoutAPostOpFallBack) {
  uint32_t seed = TestSeed(1105);
  std::mt19937 rng(seed);
  for (const char* activation : {"Elu", "Softplus"}) {  // Gelu has one (eltwise_gelu_erf)
    FusedShape s;
    s.activation = activation;
    KernelCase c = MakeFusedCase(s, rng, seed);
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c));
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
