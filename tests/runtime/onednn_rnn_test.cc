// oneDNN LSTM, GRU and RNN against the reference tier: seq, batch, input and hidden sizes
// over {1, 2, 3, 7, 17, 33}, each direction, layouts 0 and 1, with and without initial
// states, bias and peepholes, GRU with linear_before_reset 0 and 1, RNN with each
// activation oneDNN has; and the cases the fast path must leave to the reference (clip,
// other activations, input_forget, sequence_lens shorter than the sequence, weights
// computed at run time).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

const std::vector<int64_t> kSizes = {1, 2, 3, 7, 17, 33};

struct RnnCase {
  std::string op = "LSTM";
  int64_t seq = 3, batch = 2, input = 5, hidden = 7;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial_h = false, initial_c = false, peepholes = false;
  int64_t linear_before_reset = 0;          // GRU
  std::vector<std::string> activations;     // empty: attribute absent
  std::vector<int32_t> sequence_lens;       // empty: input omitted
  std::vector<Attribute> extra_attributes;  // clip, input_forget...
  bool dynamic_weights = false;
  size_t num_outputs = 0;  // 0: all the op has
};

int64_t Gates(const std::string& op) { return op == "LSTM" ? 4 : (op == "GRU" ? 3 : 1); }

std::string Describe(const RnnCase& s) {
  std::string d = s.op + " seq" + std::to_string(s.seq) + " batch" + std::to_string(s.batch) +
                  " in" + std::to_string(s.input) + " hidden" + std::to_string(s.hidden) + " " +
                  s.direction + " layout" + std::to_string(s.layout);
  if (!s.bias) d += " no-bias";
  if (s.initial_h) d += " h0";
  if (s.initial_c) d += " c0";
  if (s.peepholes) d += " P";
  if (s.linear_before_reset) d += " lbr";
  for (const std::string& a : s.activations) d += " " + a;
  if (!s.sequence_lens.empty()) d += " lens";
  for (const Attribute& a : s.extra_attributes) d += " " + a.name;
  if (s.dynamic_weights) d += " dynamic-weights";
  return d;
}

KernelCase MakeCase(const RnnCase& s, std::mt19937& rng, uint32_t seed) {
  const int64_t dirs = s.direction == "bidirectional" ? 2 : 1;
  const int64_t gh = Gates(s.op) * s.hidden;
  KernelCase c;
  c.factory = &CreateOnednnRnnKernel;
  c.op_type = s.op;
  c.seed = seed;
  c.label = Describe(s);
  c.tolerance = 2e-4;
  c.attributes = {Attribute::Int("hidden_size", s.hidden),
                  Attribute::String("direction", s.direction), Attribute::Int("layout", s.layout)};
  if (s.op == "GRU") {
    c.attributes.push_back(Attribute::Int("linear_before_reset", s.linear_before_reset));
  }
  if (!s.activations.empty())
    c.attributes.push_back(Attribute::Strings("activations", s.activations));
  for (const Attribute& a : s.extra_attributes) c.attributes.push_back(a);
  auto weight = [&](const std::vector<int64_t>& sizes) {
    Tensor t = RandomTensor(sizes, rng, -0.5f, 0.5f);
    return s.dynamic_weights ? Dynamic(t) : Constant(t);
  };
  const std::vector<int64_t> x_sizes = s.layout ? std::vector<int64_t>{s.batch, s.seq, s.input}
                                                : std::vector<int64_t>{s.seq, s.batch, s.input};
  const std::vector<int64_t> state = s.layout ? std::vector<int64_t>{s.batch, dirs, s.hidden}
                                              : std::vector<int64_t>{dirs, s.batch, s.hidden};
  c.inputs = {Dynamic(RandomTensor(x_sizes, rng)), weight({dirs, gh, s.input}),
              weight({dirs, gh, s.hidden})};
  c.inputs.push_back(s.bias ? weight({dirs, 2 * gh}) : Omitted());
  c.inputs.push_back(s.sequence_lens.empty()
                         ? Omitted()
                         : Constant(Tensor::FromVector<int32_t>({s.batch}, s.sequence_lens)));
  c.inputs.push_back(s.initial_h ? Dynamic(RandomTensor(state, rng)) : Omitted());
  if (s.op == "LSTM") {
    c.inputs.push_back(s.initial_c ? Dynamic(RandomTensor(state, rng)) : Omitted());
    c.inputs.push_back(s.peepholes ? weight({dirs, 3 * s.hidden}) : Omitted());
  }
  while (!c.inputs.empty() && !c.inputs.back().value.is_valid()) c.inputs.pop_back();
  c.num_outputs = s.num_outputs > 0 ? s.num_outputs : (s.op == "LSTM" ? 3 : 2);
  c.opset = 14;
  return c;
}

// Every size appears as seq, batch, input and hidden; the other three drawn at random.
std::vector<RnnCase> SizeSweep(const std::string& op, std::mt19937& rng) {
  std::vector<RnnCase> cases;
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    for (int64_t size : kSizes) {
      for (int which = 0; which < 4; ++which) {
        RnnCase s;
        s.op = op;
        s.direction = direction;
        s.seq = which == 0 ? size : Pick(rng, kSizes);
        s.batch = which == 1 ? size : Pick(rng, kSizes);
        s.input = which == 2 ? size : Pick(rng, kSizes);
        s.hidden = which == 3 ? size : Pick(rng, kSizes);
        s.layout = Pick(rng, {0, 1});
        s.bias = Pick(rng, {0, 1, 1}) != 0;
        s.initial_h = Pick(rng, {0, 1}) != 0;
        s.initial_c = op == "LSTM" && Pick(rng, {0, 1}) != 0;
        s.peepholes = op == "LSTM" && Pick(rng, {0, 1}) != 0;
        s.linear_before_reset = op == "GRU" ? Pick(rng, {0, 1}) : 0;
        cases.push_back(s);
      }
    }
  }
  return cases;
}

TEST(OnednnRnn, LstmSweep) {
  uint32_t seed = TestSeed(7101);
  std::mt19937 rng(seed);
  for (const RnnCase& s : SizeSweep("LSTM", rng)) EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
}

TEST(OnednnRnn, GruSweep) {
  uint32_t seed = TestSeed(7102);
  std::mt19937 rng(seed);
  for (const RnnCase& s : SizeSweep("GRU", rng)) EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
}

TEST(OnednnRnn, RnnSweep) {
  uint32_t seed = TestSeed(7103);
  std::mt19937 rng(seed);
  for (const RnnCase& s : SizeSweep("RNN", rng)) EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
}

// Every combination of direction, layout, states and peepholes at one odd size.
TEST(OnednnRnn, LstmEveryOptionalInput) {
  uint32_t seed = TestSeed(7104);
  std::mt19937 rng(seed);
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    for (int64_t layout : {0, 1}) {
      for (int mask = 0; mask < 16; ++mask) {
        RnnCase s{.seq = 5, .batch = 3, .input = 4, .hidden = 6, .direction = direction};
        s.layout = layout;
        s.bias = mask & 1;
        s.initial_h = mask & 2;
        s.initial_c = mask & 4;
        s.peepholes = mask & 8;
        EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
      }
    }
  }
}

TEST(OnednnRnn, GruBothResetModesAndLayouts) {
  uint32_t seed = TestSeed(7105);
  std::mt19937 rng(seed);
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    for (int64_t layout : {0, 1}) {
      for (int64_t lbr : {0, 1}) {
        for (bool h0 : {false, true}) {
          RnnCase s{.op = "GRU", .seq = 6, .batch = 2, .input = 3, .hidden = 17};
          s.direction = direction;
          s.layout = layout;
          s.linear_before_reset = lbr;
          s.initial_h = h0;
          EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
        }
      }
    }
  }
}

TEST(OnednnRnn, RnnActivationsOneDnnHas) {
  uint32_t seed = TestSeed(7106);
  std::mt19937 rng(seed);
  for (const char* act : {"Tanh", "Relu", "Sigmoid"}) {
    for (const char* direction : {"forward", "bidirectional"}) {
      RnnCase s{.op = "RNN", .seq = 4, .batch = 3, .input = 5, .hidden = 7};
      s.direction = direction;
      s.activations.assign(s.direction == "bidirectional" ? 2 : 1, act);
      s.initial_h = true;
      EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
    }
  }
}

TEST(OnednnRnn, OnlyYOrYAndYh) {
  uint32_t seed = TestSeed(7107);
  std::mt19937 rng(seed);
  for (size_t outputs : {1, 2}) {
    RnnCase s{.seq = 4, .batch = 2, .input = 3, .hidden = 5, .direction = "bidirectional"};
    s.num_outputs = outputs;
    s.initial_h = s.initial_c = true;
    EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
  }
}

// With batch 1 the bidirectional Y and layout-1 states are bound directly (no copy).
TEST(OnednnRnn, BidirectionalBatchOne) {
  uint32_t seed = TestSeed(7110);
  std::mt19937 rng(seed);
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (int64_t layout : {0, 1}) {
      RnnCase s{.op = op, .seq = 5, .batch = 1, .input = 3, .hidden = 7};
      s.direction = "bidirectional";
      s.layout = layout;
      s.initial_h = true;
      s.initial_c = s.op == "LSTM";
      EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
    }
  }
}

TEST(OnednnRnn, FullSequenceLensTakeTheFastPath) {
  uint32_t seed = TestSeed(7108);
  std::mt19937 rng(seed);
  RnnCase s{.seq = 4, .batch = 3, .input = 3, .hidden = 5};
  s.sequence_lens = {4, 4, 4};
  EXPECT_TRUE(CheckKernel(MakeCase(s, rng, seed)));
}

TEST(OnednnRnn, WhatTheFastPathLeavesToTheReference) {
  uint32_t seed = TestSeed(7109);
  std::mt19937 rng(seed);
  std::vector<RnnCase> cases;
  RnnCase base{.seq = 4, .batch = 3, .input = 3, .hidden = 5};
  RnnCase lens = base;
  lens.sequence_lens = {4, 2, 0};
  cases.push_back(lens);
  RnnCase clip = base;
  clip.extra_attributes = {Attribute::Float("clip", 0.5f)};
  cases.push_back(clip);
  RnnCase forget = base;
  forget.extra_attributes = {Attribute::Int("input_forget", 1)};
  cases.push_back(forget);
  RnnCase acts = base;
  acts.activations = {"HardSigmoid", "Tanh", "Tanh"};
  cases.push_back(acts);
  RnnCase gru_acts = base;
  gru_acts.op = "GRU";
  gru_acts.activations = {"Sigmoid", "Relu"};
  cases.push_back(gru_acts);
  RnnCase rnn_mixed = base;
  rnn_mixed.op = "RNN";
  rnn_mixed.direction = "bidirectional";
  rnn_mixed.activations = {"Tanh", "Relu"};
  cases.push_back(rnn_mixed);
  RnnCase dynamic = base;
  dynamic.dynamic_weights = true;
  cases.push_back(dynamic);
  for (const RnnCase& s : cases) {
    KernelCase c = MakeCase(s, rng, seed);
    c.expect = Expect::kNotApplicable;
    EXPECT_TRUE(CheckKernel(c));
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
