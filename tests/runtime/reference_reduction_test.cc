// Reference reduction kernels: Reduce* (axes as attribute or input, keepdims,
// noop_with_empty_axes), ArgMax/ArgMin (select_last_index) and TopK.
#include <cmath>

#include "reference_test_util.h"

namespace qtune::runtime::testing {
namespace {

using Sizes = std::vector<int64_t>;

// x = [[1, 2, 3], [4, 5, 6]]
Tensor Small() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }

Tensor Reduce(const std::string& op, Tensor x, std::vector<int64_t> axes, int64_t keepdims = 1,
              int64_t opset = 18) {
  OpCall call{.op_type = op, .inputs = {std::move(x)}, .opset = opset};
  call.attributes.push_back(Attribute::Int("keepdims", keepdims));
  call.inputs.push_back(Ints(std::move(axes)));
  return Run1(call);
}

TEST(ReferenceReduceTest, EveryKindOverTheLastAxis) {
  auto check = [](const std::string& op, std::vector<float> want) {
    Tensor y = Reduce(op, Small(), {1});
    ASSERT_EQ(y.sizes(), (Sizes{2, 1})) << op;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(y.data<float>()[i], want[i], 1e-5 * std::abs(want[i])) << op << " " << i;
    }
  };
  check("ReduceSum", {6, 15});
  check("ReduceMean", {2, 5});
  check("ReduceMax", {3, 6});
  check("ReduceMin", {1, 4});
  check("ReduceProd", {6, 120});
  check("ReduceL1", {6, 15});
  check("ReduceL2", {std::sqrt(14.0f), std::sqrt(77.0f)});
  check("ReduceSumSquare", {14, 77});
  check("ReduceLogSum", {std::log(6.0f), std::log(15.0f)});
  check("ReduceLogSumExp",
        {static_cast<float>(std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0))),
         static_cast<float>(std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0)))});
}

TEST(ReferenceReduceTest, KeepdimsAndAxesForms) {
  Tensor dropped = Reduce("ReduceSum", Small(), {0}, /*keepdims=*/0, /*opset=*/13);
  EXPECT_EQ(dropped.sizes(), (Sizes{3}));
  EXPECT_EQ(Values<float>(dropped), (std::vector<float>{5, 7, 9}));
  // Axes as an attribute (ReduceSum before 13, the others before 18).
  Tensor attr = Run1({.op_type = "ReduceMean",
                      .inputs = {Small()},
                      .attributes = {Attribute::Ints("axes", {-1}), Attribute::Int("keepdims", 0)},
                      .opset = 13});
  EXPECT_EQ(Values<float>(attr), (std::vector<float>{2, 5}));
  Tensor sum11 = Run1({.op_type = "ReduceSum",
                       .inputs = {Small()},
                       .attributes = {Attribute::Ints("axes", {0, 1})},
                       .opset = 11});
  EXPECT_EQ(sum11.sizes(), (Sizes{1, 1}));
  EXPECT_EQ(Values<float>(sum11), (std::vector<float>{21}));
}

TEST(ReferenceReduceTest, NoAxesReducesAllUnlessNoop) {
  Tensor all = Run1(
      {.op_type = "ReduceMax", .inputs = {Small()}, .attributes = {Attribute::Int("keepdims", 0)}});
  EXPECT_EQ(all.rank(), 0u);
  EXPECT_EQ(Values<float>(all), (std::vector<float>{6}));
  Tensor empty_axes = Reduce("ReduceSum", Small(), {}, 1, 13);
  EXPECT_EQ(empty_axes.sizes(), (Sizes{1, 1}));
  EXPECT_EQ(Values<float>(empty_axes), (std::vector<float>{21}));
  Tensor noop = Run1({.op_type = "ReduceSum",
                      .inputs = {Small(), Ints({})},
                      .attributes = {Attribute::Int("noop_with_empty_axes", 1)},
                      .opset = 13});
  EXPECT_EQ(noop.sizes(), (Sizes{2, 3}));
}

TEST(ReferenceReduceTest, MiddleAxisAtOddSizes) {
  for (int64_t n : {1, 2, 3, 5, 7, 15, 17, 33}) {
    Tensor x = Iota({2, n, 3});
    Tensor y = Reduce("ReduceSum", x, {1}, 0);
    ASSERT_EQ(y.sizes(), (Sizes{2, 3}));
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t k = 0; k < 3; ++k) {
        double want = 0;
        for (int64_t j = 0; j < n; ++j) want += static_cast<double>((i * n + j) * 3 + k);
        EXPECT_EQ(y.data<float>()[i * 3 + k], static_cast<float>(want)) << n;
      }
    }
  }
}

TEST(ReferenceReduceTest, IntegerReductionsAreExact) {
  const int64_t big = int64_t{1} << 60;
  Tensor y = Reduce("ReduceSum", I64({3}, {big, 1, 2}), {0}, 0);
  EXPECT_EQ(Values<int64_t>(y), (Sizes{big + 3}));
  Tensor mean = Reduce("ReduceMean", I32({2, 2}, {1, 2, 3, 5}), {1});
  EXPECT_EQ(Values<int32_t>(mean), (std::vector<int32_t>{1, 4}));  // truncated
  auto bad = RunOp({.op_type = "ReduceL2", .inputs = {I32({1}, {1})}});
  EXPECT_EQ(bad.status().code(), StatusCode::kUnimplemented);
}

TEST(ReferenceReduceTest, EmptySetGivesTheIdentity) {
  Tensor x = Iota({2, 0});
  EXPECT_EQ(Values<float>(Reduce("ReduceSum", x, {1})), (std::vector<float>{0, 0}));
  EXPECT_EQ(Values<float>(Reduce("ReduceProd", x, {1})), (std::vector<float>{1, 1}));
  EXPECT_EQ(Values<float>(Reduce("ReduceMax", x, {1}))[0], -INFINITY);
}

TEST(ReferenceReduceTest, BadAxisNamesTheNode) {
  auto bad =
      RunOp({.op_type = "ReduceSum", .inputs = {Small(), Ints({2})}, .opset = 13, .name = "rs"});
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("ReduceSum 'rs'"), std::string::npos);
}

TEST(ReferenceArgTest, ArgMaxArgMinWithKeepdimsAndLastIndex) {
  Tensor x = F32({2, 4}, {1, 7, 7, 0, 5, 5, 2, 5});
  Tensor first =
      Run1({.op_type = "ArgMax", .inputs = {x}, .attributes = {Attribute::Int("axis", 1)}});
  EXPECT_EQ(first.dtype(), DataType::kInt64);
  EXPECT_EQ(first.sizes(), (Sizes{2, 1}));
  EXPECT_EQ(Values<int64_t>(first), (Sizes{1, 0}));
  Tensor last = Run1({.op_type = "ArgMax",
                      .inputs = {x},
                      .attributes = {Attribute::Int("axis", -1), Attribute::Int("keepdims", 0),
                                     Attribute::Int("select_last_index", 1)}});
  EXPECT_EQ(last.sizes(), (Sizes{2}));
  EXPECT_EQ(Values<int64_t>(last), (Sizes{2, 3}));
  Tensor argmin =
      Run1({.op_type = "ArgMin", .inputs = {x}, .attributes = {Attribute::Int("keepdims", 0)}});
  EXPECT_EQ(Values<int64_t>(argmin), (Sizes{0, 1, 1, 0}));
}

TEST(ReferenceArgTest, TopKLargestAndSmallestWithStableTies) {
  Tensor x = F32({2, 4}, {3, 1, 4, 1, 5, 9, 2, 6});
  auto top = RunOp({.op_type = "TopK", .inputs = {x, Ints({2})}, .num_outputs = 2});
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_EQ(Values<float>((*top)[0]), (std::vector<float>{4, 3, 9, 6}));
  EXPECT_EQ(Values<int64_t>((*top)[1]), (Sizes{2, 0, 1, 3}));
  auto low = RunOp({.op_type = "TopK",
                    .inputs = {x, Ints({2})},
                    .attributes = {Attribute::Int("largest", 0)},
                    .num_outputs = 2});
  ASSERT_TRUE(low.ok());
  EXPECT_EQ(Values<float>((*low)[0]), (std::vector<float>{1, 1, 2, 5}));
  EXPECT_EQ(Values<int64_t>((*low)[1]), (Sizes{1, 3, 2, 0}));
  auto v1 = RunOp({.op_type = "TopK",
                   .inputs = {x},
                   .attributes = {Attribute::Int("k", 1), Attribute::Int("axis", 0)},
                   .opset = 9,
                   .num_outputs = 2});
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(Values<float>((*v1)[0]), (std::vector<float>{5, 9, 4, 6}));
  auto bad = RunOp({.op_type = "TopK", .inputs = {x, Ints({5})}, .num_outputs = 2});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReferenceCumSumTest, ExclusiveAndReverse) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto run = [&](Tensor axis, int64_t exclusive, int64_t reverse) {
    return Values<float>(Run1({.op_type = "CumSum",
                               .inputs = {x, std::move(axis)},
                               .attributes = {Attribute::Int("exclusive", exclusive),
                                              Attribute::Int("reverse", reverse)}}));
  };
  EXPECT_EQ(run(I64({}, {1}), 0, 0), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(run(I32({}, {-1}), 1, 0), (std::vector<float>{0, 1, 3, 0, 4, 9}));
  EXPECT_EQ(run(I64({}, {1}), 0, 1), (std::vector<float>{6, 5, 3, 15, 11, 6}));
  EXPECT_EQ(run(I64({}, {0}), 1, 1), (std::vector<float>{4, 5, 6, 0, 0, 0}));
  Tensor ints = Run1({.op_type = "CumSum", .inputs = {I64({3}, {5, -2, 7}), I64({}, {0})}});
  EXPECT_EQ(Values<int64_t>(ints), (Sizes{5, 3, 10}));
}

}  // namespace
}  // namespace qtune::runtime::testing
