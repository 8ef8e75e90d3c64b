// The value kernels, part 2: SplitToSequence and ConcatFromSequence (split scalar / 1-D /
// absent, keepdims=0, new_axis, negative axes), the optional ops, ValueIdentity and the
// SequenceMap helper.
#include <string>
#include <vector>

#include "value_kernel_test_util.h"

namespace qtune::runtime::testing {
namespace {

std::vector<Sizes> ElementSizes(const RunValue& v) {
  std::vector<Sizes> sizes;
  if (v.is_sequence()) {
    for (const Tensor& t : v.sequence()) sizes.push_back(t.sizes());
  }
  return sizes;
}

TEST(SplitToSequenceTest, WithoutSplitMakesChunksOfOneAndKeepdimsZeroDropsTheAxis) {
  RunValue v = Run1Value({.op_type = "SplitToSequence",
                          .inputs = {T(Iota({2, 3}))},
                          .attributes = {Attribute::Int("axis", 1)}});
  EXPECT_EQ(ElementSizes(v), (std::vector<Sizes>{{2, 1}, {2, 1}, {2, 1}}));
  EXPECT_EQ(Values<float>(v.sequence()[1]), (std::vector<float>{1, 4}));
  v = Run1Value({.op_type = "SplitToSequence",
                 .inputs = {T(Iota({2, 3}))},
                 .attributes = {Attribute::Int("axis", -1), Attribute::Int("keepdims", 0)}});
  EXPECT_EQ(ElementSizes(v), (std::vector<Sizes>{{2}, {2}, {2}}));
  EXPECT_EQ(Values<float>(v.sequence()[2]), (std::vector<float>{2, 5}));
  EXPECT_EQ(v.elem_dtype(), DataType::kFloat32);
}

TEST(SplitToSequenceTest, ScalarSplitLeavesAShorterLastChunk) {
  RunValue v =
      Run1Value({.op_type = "SplitToSequence", .inputs = {T(Iota({5, 2})), T(I64({}, {2}))}});
  EXPECT_EQ(ElementSizes(v), (std::vector<Sizes>{{2, 2}, {2, 2}, {1, 2}}));
  EXPECT_EQ(Values<float>(v.sequence()[2]), (std::vector<float>{8, 9}));
  // keepdims is ignored when split is given.
  v = Run1Value({.op_type = "SplitToSequence",
                 .inputs = {T(Iota({4})), T(I32({}, {1}))},
                 .attributes = {Attribute::Int("keepdims", 0)}});
  EXPECT_EQ(ElementSizes(v), (std::vector<Sizes>{{1}, {1}, {1}, {1}}));
}

TEST(SplitToSequenceTest, OneDimensionalSplitListsTheLengthsIncludingZero) {
  RunValue v = Run1Value({.op_type = "SplitToSequence",
                          .inputs = {T(Iota({2, 5})), T(Ints({3, 0, 2}))},
                          .attributes = {Attribute::Int("axis", 1)}});
  EXPECT_EQ(ElementSizes(v), (std::vector<Sizes>{{2, 3}, {2, 0}, {2, 2}}));
  EXPECT_EQ(Values<float>(v.sequence()[0]), (std::vector<float>{0, 1, 2, 5, 6, 7}));
  EXPECT_EQ(Values<float>(v.sequence()[2]), (std::vector<float>{3, 4, 8, 9}));
}

TEST(SplitToSequenceTest, AnEmptyAxisGivesAnEmptySequence) {
  RunValue v = Run1Value({.op_type = "SplitToSequence", .inputs = {T(Iota({0, 3}))}});
  ASSERT_TRUE(v.is_sequence());
  EXPECT_TRUE(v.sequence().empty());
  EXPECT_EQ(v.elem_dtype(), DataType::kFloat32);
}

TEST(SplitToSequenceTest, BadSplitsAndAxesAreErrors) {
  ExpectNodeError({.op_type = "SplitToSequence", .inputs = {T(Iota({5})), T(Ints({2, 2}))}},
                  "add up to 4 but the axis has 5");
  ExpectNodeError({.op_type = "SplitToSequence", .inputs = {T(Iota({5})), T(I64({}, {0}))}},
                  "must be positive");
  ExpectNodeError({.op_type = "SplitToSequence", .inputs = {T(Iota({5})), T(Ints({6, -1}))}},
                  "negative length");
  ExpectNodeError({.op_type = "SplitToSequence",
                   .inputs = {T(Iota({5}))},
                   .attributes = {Attribute::Int("axis", 1)}},
                  "axis");
  ExpectNodeError({.op_type = "SplitToSequence", .inputs = {T(F32({}, {1}))}}, "scalar");
}

TEST(ConcatFromSequenceTest, JoinsAlongAnExistingAxisOfDifferentLengths) {
  RunValue seq = RunValue::Sequence(DataType::kFloat32, {Iota({2, 1}), Iota({2, 2}, 10)});
  RunValue v = Run1Value({.op_type = "ConcatFromSequence",
                          .inputs = {seq},
                          .attributes = {Attribute::Int("axis", -1)}});
  ASSERT_TRUE(v.is_tensor());
  EXPECT_EQ(v.tensor().sizes(), (Sizes{2, 3}));
  EXPECT_EQ(Values<float>(v.tensor()), (std::vector<float>{0, 10, 11, 1, 12, 13}));
}

TEST(ConcatFromSequenceTest, NewAxisStacksAndAcceptsAxisEqualToRank) {
  RunValue seq =
      RunValue::Sequence(DataType::kInt64, {I64({2}, {1, 2}), I64({2}, {3, 4}), I64({2}, {5, 6})});
  RunValue v =
      Run1Value({.op_type = "ConcatFromSequence",
                 .inputs = {seq},
                 .attributes = {Attribute::Int("axis", 0), Attribute::Int("new_axis", 1)}});
  EXPECT_EQ(v.tensor().sizes(), (Sizes{3, 2}));
  EXPECT_EQ(Values<int64_t>(v.tensor()), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  for (int64_t axis : {1, -1}) {
    v = Run1Value({.op_type = "ConcatFromSequence",
                   .inputs = {seq},
                   .attributes = {Attribute::Int("axis", axis), Attribute::Int("new_axis", 1)}});
    EXPECT_EQ(v.tensor().sizes(), (Sizes{2, 3})) << "axis " << axis;
    EXPECT_EQ(Values<int64_t>(v.tensor()), (std::vector<int64_t>{1, 3, 5, 2, 4, 6}));
  }
  // Scalars stack into a 1-D tensor.
  v = Run1Value({.op_type = "ConcatFromSequence",
                 .inputs = {RunValue::Sequence(DataType::kFloat32, {F32({}, {7}), F32({}, {8})})},
                 .attributes = {Attribute::Int("axis", 0), Attribute::Int("new_axis", 1)}});
  EXPECT_EQ(v.tensor().sizes(), (Sizes{2}));
}

TEST(ConcatFromSequenceTest, UndoesSplitToSequence) {
  Tensor x = Iota({3, 4, 5});
  RunValue parts = Run1Value({.op_type = "SplitToSequence",
                              .inputs = {T(x), T(Ints({1, 3}))},
                              .attributes = {Attribute::Int("axis", 1)}});
  RunValue back = Run1Value({.op_type = "ConcatFromSequence",
                             .inputs = {parts},
                             .attributes = {Attribute::Int("axis", 1)}});
  EXPECT_EQ(back.tensor().sizes(), x.sizes());
  EXPECT_EQ(Values<float>(back.tensor()), Values<float>(x));
  parts = Run1Value({.op_type = "SplitToSequence",
                     .inputs = {T(x)},
                     .attributes = {Attribute::Int("axis", 2), Attribute::Int("keepdims", 0)}});
  back = Run1Value({.op_type = "ConcatFromSequence",
                    .inputs = {parts},
                    .attributes = {Attribute::Int("axis", -1), Attribute::Int("new_axis", 1)}});
  EXPECT_EQ(back.tensor().sizes(), x.sizes());
  EXPECT_EQ(Values<float>(back.tensor()), Values<float>(x));
}

TEST(ConcatFromSequenceTest, EmptySequencesMismatchesAndBadAxesAreErrors) {
  const std::vector<Attribute> axis0 = {Attribute::Int("axis", 0)};
  ExpectNodeError({.op_type = "ConcatFromSequence",
                   .inputs = {RunValue::Sequence(DataType::kFloat32, {})},
                   .attributes = axis0},
                  "empty sequence");
  RunValue mixed = RunValue::Sequence(DataType::kFloat32, {Iota({2, 2}), Iota({2, 3})});
  ExpectNodeError({.op_type = "ConcatFromSequence", .inputs = {mixed}, .attributes = axis0},
                  "may differ only along axis 0");
  ExpectNodeError({.op_type = "ConcatFromSequence",
                   .inputs = {mixed},
                   .attributes = {Attribute::Int("axis", 1), Attribute::Int("new_axis", 1)}},
                  "must be equal");
  ExpectNodeError({.op_type = "ConcatFromSequence",
                   .inputs = {Seq(2)},
                   .attributes = {Attribute::Int("axis", 1)}},
                  "axis");
  ExpectNodeError({.op_type = "ConcatFromSequence", .inputs = {Seq(2)}}, "'axis' is required");
}

TEST(OptionalTest, WrapsItsInputOrIsEmptyWithoutOne) {
  RunValue v = Run1Value({.op_type = "Optional", .inputs = {T(Iota({2}))}});
  ASSERT_TRUE(v.is_tensor());
  EXPECT_EQ(Values<float>(v.tensor()), (std::vector<float>{0, 1}));
  EXPECT_TRUE(Run1Value({.op_type = "Optional"}).is_none());
  EXPECT_TRUE(Run1Value({.op_type = "Optional", .inputs = {RunValue()}}).is_none());
  EXPECT_EQ(Heads(Run1Value({.op_type = "Optional", .inputs = {Seq(2)}})),
            (std::vector<float>{0, 1}));
  ExpectNodeError({.op_type = "Optional", .inputs = {RunValue::None()}}, "cannot hold");
}

TEST(OptionalHasElementTest, TrueForATensorOrAnySequence) {
  auto has = [](RunValue in, int64_t opset) {
    RunValue v = Run1Value({.op_type = "OptionalHasElement", .inputs = {in}, .opset = opset});
    EXPECT_EQ(v.tensor().dtype(), DataType::kBool);
    EXPECT_EQ(v.tensor().rank(), 0u);
    return v.tensor().data<bool>()[0];
  };
  EXPECT_FALSE(has(RunValue::None(), 15));
  EXPECT_TRUE(has(T(Iota({0})), 15));
  EXPECT_TRUE(has(RunValue::Sequence(DataType::kFloat32, {}), 15));
  EXPECT_FALSE(has(RunValue(), 18));  // an omitted input, allowed from opset 18
}

TEST(OptionalGetElementTest, ReturnsTheElementAndFailsOnAnEmptyOptional) {
  RunValue v =
      Run1Value({.op_type = "OptionalGetElement", .inputs = {T(F32({2}, {3, 4}))}, .opset = 15});
  EXPECT_EQ(Values<float>(v.tensor()), (std::vector<float>{3, 4}));
  EXPECT_EQ(Heads(Run1Value({.op_type = "OptionalGetElement", .inputs = {Seq(3)}})),
            (std::vector<float>{0, 1, 2}));
  ExpectNodeError({.op_type = "OptionalGetElement", .inputs = {RunValue::None()}},
                  "optional is empty");
  ExpectNodeError({.op_type = "OptionalGetElement", .inputs = {RunValue()}}, "omitted");
}

TEST(ValueIdentityTest, CopiesTensorsAndKeepsSequencesAndEmptyOptionals) {
  ir::GraphBuilder b(18);
  ir::Value* x = b.Input("x", DataType::kFloat32, Sizes{2});
  const ir::Node& node = *(b.Op("Identity", {x}), b.last_node());
  std::vector<RunValue> in = {Seq(2)};
  auto out = ValueIdentity({.node = node, .inputs = in, .opset = 18});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Heads((*out)[0]), (std::vector<float>{0, 1}));
  in = {RunValue::None()};
  EXPECT_TRUE((*ValueIdentity({.node = node, .inputs = in, .opset = 18}))[0].is_none());
  in = {T(Iota({2}))};
  out = ValueIdentity({.node = node, .inputs = in, .opset = 18});
  ASSERT_TRUE(out.ok());
  EXPECT_NE((*out)[0].tensor().raw_data(), in[0].tensor().raw_data());
}

TEST(RunSequenceMapTest, RunsTheBodyPerElementWithTensorInputsRepeated) {
  ir::GraphBuilder b(17);
  ir::Value* s = b.Input("s", DataType::kFloat32, Sizes{});
  ir::Value* x = b.Input("x", DataType::kFloat32, Sizes{});
  b.MultiOp("SequenceMap", {s, x}, 1, {}, {.name = "map"});
  const ir::Node& node = *b.last_node();
  b.SetType(node.output(0), DataType::kInt64, Shape());
  // The body: element + x[0].
  SequenceMapBody add = [](std::span<const Tensor> in) -> StatusOr<std::vector<Tensor>> {
    Tensor out = in[0].Clone();
    for (float& f : out.span<float>()) f += in[1].data<float>()[0];
    return std::vector<Tensor>{out};
  };
  std::vector<RunValue> inputs = {Seq(3), T(F32({1}, {10}))};
  auto out = RunSequenceMap({.node = node, .inputs = inputs, .opset = 17}, add);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Heads((*out)[0]), (std::vector<float>{10, 11, 12}));

  // Empty sequences: the output's element type comes from the node's declared type.
  inputs = {RunValue::Sequence(DataType::kFloat32, {}), T(F32({1}, {10}))};
  out = RunSequenceMap({.node = node, .inputs = inputs, .opset = 17}, add);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE((*out)[0].sequence().empty());
  EXPECT_EQ((*out)[0].elem_dtype(), DataType::kInt64);

  inputs = {Seq(3), Seq(2)};
  out = RunSequenceMap({.node = node, .inputs = inputs, .opset = 17}, add);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("SequenceMap 'map'"), std::string::npos);

  SequenceMapBody fail = [](std::span<const Tensor>) -> StatusOr<std::vector<Tensor>> {
    return InvalidArgumentError("body failed");
  };
  inputs = {Seq(3), T(F32({1}, {10}))};
  out = RunSequenceMap({.node = node, .inputs = inputs, .opset = 17}, fail);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("iteration 0"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime::testing
