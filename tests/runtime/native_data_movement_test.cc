// The data-movement fast path: Split (native strided copies), Slice and Pad (runs of
// copies: every pad mode, negative steps, clamping, 1-, 4- and 8-byte elements) and
// float32 Reduce* over contiguous axes against the reference tier through the kernel
// harness, and
// Reshape/Squeeze/Unsqueeze/Flatten compiled as views (no step, no copy) checked through
// whole sessions against the reference tier, including views of views, views that are
// graph outputs, views of graph inputs, and an in-place consumer next to a view.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/kernel_test_util.h"
#include "runtime/session.h"

namespace qtune::runtime::kernel_testing {
namespace {

KernelCase SplitCase(const std::vector<int64_t>& x, int64_t axis, std::vector<int64_t> split,
                     std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateNativeSplitKernel;
  c.op_type = "Split";
  c.opset = 13;
  c.seed = seed;
  c.label =
      "Split " + SizesString(x) + " axis " + std::to_string(axis) + " into " + SizesString(split);
  c.attributes = {Attribute::Int("axis", axis)};
  c.inputs = {Dynamic(RandomTensor(x, rng)),
              Constant(Tensor::FromVector<int64_t>({static_cast<int64_t>(split.size())}, split))};
  c.num_outputs = split.size();
  return c;
}

TEST(NativeSplit, MatchesReferenceOnEveryAxis) {
  uint32_t seed = TestSeed(3201);
  std::mt19937 rng(seed);
  EXPECT_TRUE(CheckKernel(SplitCase({8, 17, 192}, 2, {64, 64, 64}, rng, seed)));  // fused QKV
  EXPECT_TRUE(CheckKernel(SplitCase({8, 17, 192}, -1, {1, 63, 128}, rng, seed)));
  EXPECT_TRUE(CheckKernel(SplitCase({3, 5, 7}, 0, {1, 2}, rng, seed)));
  EXPECT_TRUE(CheckKernel(SplitCase({3, 5, 7}, 1, {2, 0, 3}, rng, seed)));   // an empty piece
  EXPECT_TRUE(CheckKernel(SplitCase({1, 66, 33}, 1, {33, 33}, rng, seed)));  // real / imag
  EXPECT_TRUE(CheckKernel(SplitCase({31}, 0, {15, 16}, rng, seed)));
}

TEST(NativeSplit, EvenSplitWithoutSizesAndOpset18NumOutputs) {
  uint32_t seed = TestSeed(3202);
  std::mt19937 rng(seed);
  KernelCase even = SplitCase({2, 9, 5}, 1, {3, 3, 3}, rng, seed);
  even.inputs.pop_back();  // no split input: equal pieces
  EXPECT_TRUE(CheckKernel(even));
  KernelCase uneven = SplitCase({2, 7, 5}, 1, {3, 3, 1}, rng, seed);
  uneven.inputs.pop_back();
  uneven.opset = 18;
  uneven.attributes.push_back(Attribute::Int("num_outputs", 3));
  EXPECT_TRUE(CheckKernel(uneven));
}

KernelCase SliceCase(Tensor x, std::vector<int64_t> starts, std::vector<int64_t> ends,
                     std::vector<int64_t> axes, std::vector<int64_t> steps, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateNativeCopyRunsKernel;
  c.op_type = "Slice";
  c.opset = 13;
  c.seed = seed;
  c.label = "Slice " + SizesString(x.sizes()) + " starts " + SizesString(starts) + " ends " +
            SizesString(ends) + " axes " + SizesString(axes) + " steps " + SizesString(steps);
  auto ints = [](const std::vector<int64_t>& v) {
    return Constant(Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v));
  };
  c.inputs = {Dynamic(std::move(x)), ints(starts), ints(ends), ints(axes)};
  if (!steps.empty()) c.inputs.push_back(ints(steps));
  c.tolerance = 0;
  return c;
}

TEST(NativeCopyRuns, SliceMatchesReferenceExactly) {
  uint32_t seed = TestSeed(3203);
  std::mt19937 rng(seed);
  const int64_t big = std::numeric_limits<int64_t>::max();
  Tensor x = RandomTensor({1, 258, 8}, rng);
  EXPECT_TRUE(CheckKernel(SliceCase(x, {0}, {129}, {1}, {}, seed)));     // STFT real part
  EXPECT_TRUE(CheckKernel(SliceCase(x, {129}, {big}, {1}, {}, seed)));   // and imaginary
  EXPECT_TRUE(CheckKernel(SliceCase(x, {-3}, {-1}, {-1}, {}, seed)));    // negative bounds
  EXPECT_TRUE(CheckKernel(SliceCase(x, {7}, {-big}, {2}, {-2}, seed)));  // reversed, step 2
  Tensor y = RandomTensor({3, 5, 7, 6}, rng);
  EXPECT_TRUE(CheckKernel(SliceCase(y, {1, 0, 2}, {3, 5, 100}, {0, 2, 3}, {1, 3, 2}, seed)));
  EXPECT_TRUE(CheckKernel(SliceCase(y, {4, -1}, {0, -100}, {1, 3}, {-1, -3}, seed)));
  EXPECT_TRUE(CheckKernel(SliceCase(y, {2}, {2}, {1}, {}, seed)));  // empty
  // Elements of 1, 4 and 8 bytes.
  std::vector<int64_t> codes(60);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<int64_t>(i * 7919 % 251);
  std::vector<uint8_t> bytes(codes.begin(), codes.end());
  std::vector<int32_t> words(codes.begin(), codes.end());
  for (Tensor t : {Tensor::FromVector<uint8_t>({3, 4, 5}, bytes),
                   Tensor::FromVector<int32_t>({3, 4, 5}, words),
                   Tensor::FromVector<int64_t>({3, 4, 5}, codes)}) {
    EXPECT_TRUE(CheckKernel(SliceCase(t, {1, 4}, {3, 0}, {1, 2}, {1, -2}, seed)));
  }
}

KernelCase PadCase(Tensor x, const std::string& mode, std::vector<int64_t> pads,
                   std::optional<float> value, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateNativeCopyRunsKernel;
  c.op_type = "Pad";
  c.opset = 18;
  c.seed = seed;
  c.label = "Pad " + SizesString(x.sizes()) + " " + mode + " pads " + SizesString(pads);
  c.attributes = {Attribute::String("mode", mode)};
  c.inputs = {Dynamic(std::move(x)),
              Constant(Tensor::FromVector<int64_t>({static_cast<int64_t>(pads.size())}, pads))};
  if (value) c.inputs.push_back(Constant(Tensor::FromVector<float>({}, {*value})));
  c.tolerance = 0;
  return c;
}

TEST(NativeCopyRuns, PadMatchesReferenceExactlyInEveryMode) {
  uint32_t seed = TestSeed(3204);
  std::mt19937 rng(seed);
  // Silero VAD's reflect pad of 512 samples by 96 on each side, as [1, 1, 1, 512].
  EXPECT_TRUE(CheckKernel(
      PadCase(RandomTensor({1, 1, 1, 512}, rng), "reflect", {0, 0, 0, 96, 0, 0, 0, 96}, {}, seed)));
  Tensor x = RandomTensor({2, 3, 5, 4}, rng);
  for (const std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    EXPECT_TRUE(CheckKernel(PadCase(x, mode, {0, 1, 2, 3, 1, 0, 4, 3}, {}, seed)));
    EXPECT_TRUE(CheckKernel(PadCase(x, mode, {0, 0, -1, 2, 0, 0, 1, -2}, {}, seed)));  // crops
  }
  EXPECT_TRUE(CheckKernel(PadCase(x, "constant", {0, 0, 1, 1, 0, 0, 1, 1}, 2.5f, seed)));
  // Opset 2: pads and value as attributes (a zero value).
  KernelCase old = PadCase(x, "edge", {}, {}, seed);
  old.opset = 2;
  old.attributes.push_back(Attribute::Ints("pads", {0, 0, 1, 2, 0, 0, 2, 1}));
  old.inputs.pop_back();
  EXPECT_TRUE(CheckKernel(old));
}

TEST(NativeCopyRuns, LeavesRunTimeParametersAndAttributeValuesToTheReference) {
  uint32_t seed = TestSeed(3205);
  std::mt19937 rng(seed);
  Tensor x = RandomTensor({4, 6}, rng);
  KernelCase run_time = SliceCase(x, {1}, {3}, {1}, {}, seed);
  run_time.inputs[1] = Dynamic(Tensor::FromVector<int64_t>({1}, {1}));
  run_time.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(run_time));
  KernelCase valued = PadCase(x, "constant", {}, {}, seed);
  valued.opset = 2;
  valued.attributes.push_back(Attribute::Ints("pads", {1, 1, 1, 1}));
  valued.attributes.push_back(Attribute::Float("value", 1.5f));
  valued.inputs.pop_back();
  valued.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(valued));
}

KernelCase ReduceCase(const std::string& op, const std::vector<int64_t>& x,
                      const std::vector<int64_t>& axes, int64_t keepdims, int64_t opset,
                      std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateNativeReduceKernel;
  c.op_type = op;
  c.opset = opset;
  c.seed = seed;
  c.label = op + " " + SizesString(x) + " axes " + SizesString(axes) + " keepdims " +
            std::to_string(keepdims) + " opset " + std::to_string(opset);
  c.attributes = {Attribute::Int("keepdims", keepdims)};
  c.inputs = {Dynamic(RandomTensor(x, rng))};
  const bool axes_input = op == "ReduceSum" ? opset >= 13 : opset >= 18;
  if (axes_input) {
    if (!axes.empty()) {
      c.inputs.push_back(
          Constant(Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes)));
    }
  } else if (!axes.empty()) {
    c.attributes.push_back(Attribute::Ints("axes", axes));
  }
  c.tolerance = 1e-5;
  return c;
}

TEST(NativeReduce, MatchesReferenceOverLastMiddleAndAllAxes) {
  uint32_t seed = TestSeed(3203);
  std::mt19937 rng(seed);
  const std::vector<std::vector<int64_t>> axes_sets = {{-1}, {1}, {0}, {1, 2}, {}, {2, 1}};
  for (const std::string op :
       {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL2"}) {
    for (int64_t opset : {13, 18}) {
      for (const auto& axes : axes_sets) {
        for (int64_t keepdims : {0, 1}) {
          EXPECT_TRUE(CheckKernel(ReduceCase(op, {3, 17, 33}, axes, keepdims, opset, rng, seed)));
        }
      }
    }
  }
  // LayerNorm statistics of a ViT at batch 2 and the mean over its tokens.
  EXPECT_TRUE(CheckKernel(ReduceCase("ReduceMean", {2, 197, 192}, {-1}, 1, 13, rng, seed)));
  EXPECT_TRUE(CheckKernel(ReduceCase("ReduceMean", {2, 197, 192}, {1}, 0, 13, rng, seed)));
}

TEST(NativeReduce, LeavesNonContiguousAxesAndNoopToTheReference) {
  uint32_t seed = TestSeed(3204);
  std::mt19937 rng(seed);
  KernelCase split_axes = ReduceCase("ReduceMean", {3, 5, 7}, {0, 2}, 1, 13, rng, seed);
  split_axes.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(split_axes));
  KernelCase noop = ReduceCase("ReduceSum", {3, 5, 7}, {}, 1, 13, rng, seed);
  noop.attributes.push_back(Attribute::Int("noop_with_empty_axes", 1));
  noop.expect = Expect::kNotApplicable;
  EXPECT_TRUE(CheckKernel(noop));
}

// x [2,3,4,5] -> Reshape [6,20] -> Unsqueeze 0 -> Relu (reads the view) -> Squeeze -> y0;
// Flatten(x) -> y1 (a view of a graph input as a graph output); Reshape(Relu) -> Add with
// its own source (an in-place candidate reading a view of the same buffer) -> y2.
std::unique_ptr<ir::Graph> ViewGraph() {
  ir::GraphBuilder b(13);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 3, 4, 5});
  ir::Value* shape = b.Initializer("shape", Tensor::FromVector<int64_t>({2}, {6, 20}));
  ir::Value* axes = b.Initializer("axes", Tensor::FromVector<int64_t>({1}, {0}));
  ir::Value* r = b.Op("Reshape", {x, shape});
  ir::Value* u = b.Op("Unsqueeze", {r, axes});
  ir::Value* act = b.Op("Relu", {u});
  ir::Value* s = b.Op("Squeeze", {act, axes}, {}, {"squeeze", {"y0"}, ""});
  b.Output(s);
  b.Output(b.Op("Flatten", {x}, {ir::Attribute::Int("axis", 2)}, {"flatten", {"y1"}, ""}));
  ir::Value* back =
      b.Op("Reshape", {act, b.Initializer("shape3", Tensor::FromVector<int64_t>({3}, {1, 6, 20}))});
  b.Output(b.Op("Add", {back, act}, {}, {"add", {"y2"}, ""}));
  return b.Build();
}

TEST(PlanViews, ReshapeSqueezeUnsqueezeFlattenAreViewsAndMatchReference) {
  std::unique_ptr<ir::Graph> graph = ViewGraph();
  std::mt19937 rng(TestSeed(3205));
  NamedTensors inputs = {{"x", RandomTensor({2, 3, 4, 5}, rng)}};
  SessionOptions fast_options;
  auto fast = Session::Create(*graph, fast_options);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  SessionOptions reference_options;
  reference_options.use_onednn = false;
  auto reference = Session::Create(*graph, reference_options);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  for (int round = 0; round < 2; ++round) {  // the second run reuses the arena
    auto got = (*fast)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    auto want = (*reference)->Run(inputs);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i) {
      const Tensor& g = (*got)[i].second;
      const Tensor& w = (*want)[i].second;
      ASSERT_EQ(g.sizes(), w.sizes()) << (*got)[i].first;
      for (int64_t e = 0; e < g.num_elements(); ++e) {
        ASSERT_EQ(g.data<float>()[e], w.data<float>()[e]) << (*got)[i].first << " at " << e;
      }
    }
  }
  auto plan = (*fast)->Prepare({{"x", {2, 3, 4, 5}}});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ((*plan)->views, 5) << (*plan)->ToString();
  for (const PlanStep& step : (*plan)->steps) {
    EXPECT_TRUE(step.op_type != "Reshape" && step.op_type != "Squeeze" &&
                step.op_type != "Unsqueeze" && step.op_type != "Flatten")
        << step.op_type << " '" << step.node_name << "' runs as a step\n"
        << (*plan)->ToString();
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
