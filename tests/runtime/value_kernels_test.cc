// The value kernels (runtime/reference/value_kernels.h), part 1: the registry and the
// sequence ops that move whole tensors (SequenceEmpty/Construct/Insert/At/Erase/Length),
// called on one-node graphs: negative positions, empty sequences, errors naming the node.
#include <string>
#include <vector>

#include "value_kernel_test_util.h"

namespace qtune::runtime::testing {
namespace {

TEST(ValueKernelRegistryTest, FindsEveryValueOpOnlyInTheDefaultDomain) {
  EXPECT_EQ(ValueKernelRegistry::Get().OpTypes(),
            (std::vector<std::string>{"ConcatFromSequence", "Optional", "OptionalGetElement",
                                      "OptionalHasElement", "SequenceAt", "SequenceConstruct",
                                      "SequenceEmpty", "SequenceErase", "SequenceInsert",
                                      "SequenceLength", "SplitToSequence"}));
  ir::GraphBuilder b(18);
  b.Op("SequenceEmpty", {});
  EXPECT_NE(ValueKernelRegistry::Get().FindFor(*b.last_node()), nullptr);
  b.Op("SequenceEmpty", {}, {}, {.domain = "com.example"});
  EXPECT_EQ(ValueKernelRegistry::Get().FindFor(*b.last_node()), nullptr);
  b.Op("Relu", {b.Input("x", DataType::kFloat32, Sizes{2})});
  EXPECT_EQ(ValueKernelRegistry::Get().FindFor(*b.last_node()), nullptr);
}

TEST(SequenceEmptyTest, DefaultsToFloatAndTakesTheDtypeAttribute) {
  RunValue v = Run1Value({.op_type = "SequenceEmpty"});
  ASSERT_TRUE(v.is_sequence());
  EXPECT_TRUE(v.sequence().empty());
  EXPECT_EQ(v.elem_dtype(), DataType::kFloat32);
  v = Run1Value({.op_type = "SequenceEmpty",
                 .attributes = {Attribute::Int("dtype", static_cast<int64_t>(DataType::kInt64))}});
  EXPECT_EQ(v.elem_dtype(), DataType::kInt64);
  ExpectNodeError({.op_type = "SequenceEmpty", .attributes = {Attribute::Int("dtype", 99)}},
                  "not an ONNX data type");
}

TEST(SequenceConstructTest, KeepsOrderAndRejectsMixedTypes) {
  RunValue v = Run1Value(
      {.op_type = "SequenceConstruct", .inputs = {T(Iota({2})), T(Iota({3}, 5)), T(Iota({0}))}});
  ASSERT_TRUE(v.is_sequence());
  ASSERT_EQ(v.sequence().size(), 3u);
  EXPECT_EQ(v.sequence()[1].sizes(), (Sizes{3}));
  EXPECT_EQ(Values<float>(v.sequence()[1]), (std::vector<float>{5, 6, 7}));
  EXPECT_EQ(v.sequence()[2].num_elements(), 0);
  ExpectNodeError({.op_type = "SequenceConstruct", .inputs = {T(Iota({2})), T(I64({1}, {1}))}},
                  "input 1 has element type int64");
  ExpectNodeError({.op_type = "SequenceConstruct"}, "at least one input");
}

TEST(SequenceConstructTest, CopiesABorrowedInputSoItsStorageMayBeReused) {
  std::vector<float> storage = {1, 2, 3};
  Tensor borrowed = Tensor::Borrow(DataType::kFloat32, {3}, storage.data());
  RunValue v = Run1Value({.op_type = "SequenceConstruct", .inputs = {T(borrowed)}});
  storage[0] = 100;
  ASSERT_TRUE(v.is_sequence());
  EXPECT_EQ(Values<float>(v.sequence()[0]), (std::vector<float>{1, 2, 3}));
}

TEST(SequenceInsertTest, AppendsWithoutPositionAndAtPositionEqualToLength) {
  RunValue v = Run1Value({.op_type = "SequenceInsert", .inputs = {Seq(2), T(F32({1}, {9}))}});
  EXPECT_EQ(Heads(v), (std::vector<float>{0, 1, 9}));
  v = Run1Value(
      {.op_type = "SequenceInsert", .inputs = {Seq(2), T(F32({1}, {9})), T(I64({}, {2}))}});
  EXPECT_EQ(Heads(v), (std::vector<float>{0, 1, 9}));
}

TEST(SequenceInsertTest, NegativePositionCountsFromTheEnd) {
  // ONNX's test data stores the position with sizes [1]; the spec says a scalar.
  RunValue v = Run1Value(
      {.op_type = "SequenceInsert", .inputs = {Seq(3), T(F32({1}, {9})), T(I64({1}, {-1}))}});
  EXPECT_EQ(Heads(v), (std::vector<float>{0, 1, 9, 2}));
  v = Run1Value(
      {.op_type = "SequenceInsert", .inputs = {Seq(3), T(F32({1}, {9})), T(I32({}, {-3}))}});
  EXPECT_EQ(Heads(v), (std::vector<float>{9, 0, 1, 2}));
  v = Run1Value(
      {.op_type = "SequenceInsert", .inputs = {Seq(3), T(F32({1}, {9})), T(I64({}, {0}))}});
  EXPECT_EQ(Heads(v), (std::vector<float>{9, 0, 1, 2}));
}

TEST(SequenceInsertTest, IntoAnEmptySequenceLeavesTheInputSequenceUnchanged) {
  RunValue empty = RunValue::Sequence(DataType::kFloat32, {});
  RunValue v = Run1Value({.op_type = "SequenceInsert", .inputs = {empty, T(F32({1}, {9}))}});
  EXPECT_EQ(Heads(v), (std::vector<float>{9}));
  EXPECT_TRUE(empty.sequence().empty());
}

TEST(SequenceInsertTest, OutOfRangePositionAndWrongTypeAreErrors) {
  ExpectNodeError(
      {.op_type = "SequenceInsert", .inputs = {Seq(2), T(F32({1}, {9})), T(I64({}, {3}))}},
      "position 3 is out of range [-2, 2]");
  ExpectNodeError(
      {.op_type = "SequenceInsert", .inputs = {Seq(2), T(F32({1}, {9})), T(I64({}, {-3}))}},
      "out of range");
  ExpectNodeError({.op_type = "SequenceInsert", .inputs = {Seq(2), T(I64({1}, {9}))}},
                  "element type int64 but the sequence holds float32");
  ExpectNodeError(
      {.op_type = "SequenceInsert", .inputs = {Seq(2), T(F32({1}, {9})), T(F32({}, {0}))}},
      "must be int32 or int64");
  ExpectNodeError({.op_type = "SequenceInsert", .inputs = {T(Iota({2})), T(F32({1}, {9}))}},
                  "must be a sequence but is a tensor");
}

TEST(SequenceAtTest, PositiveAndNegativePositionsReturnACopy) {
  RunValue seq = Seq(3);
  RunValue v = Run1Value({.op_type = "SequenceAt", .inputs = {seq, T(I64({}, {1}))}});
  ASSERT_TRUE(v.is_tensor());
  EXPECT_EQ(Values<float>(v.tensor()), (std::vector<float>{1, 1}));
  v.tensor().data<float>()[0] = 42;
  EXPECT_EQ(seq.sequence()[1].data<float>()[0], 1);
  v = Run1Value({.op_type = "SequenceAt", .inputs = {seq, T(I32({}, {-1}))}});
  EXPECT_EQ(v.tensor().sizes(), (Sizes{3}));
}

TEST(SequenceAtTest, OutOfRangeAndEmptySequenceAreErrors) {
  ExpectNodeError({.op_type = "SequenceAt", .inputs = {Seq(3), T(I64({}, {3}))}},
                  "position 3 is out of range [-3, 2]");
  ExpectNodeError({.op_type = "SequenceAt", .inputs = {Seq(3), T(I64({}, {-4}))}}, "out of range");
  ExpectNodeError({.op_type = "SequenceAt",
                   .inputs = {RunValue::Sequence(DataType::kFloat32, {}), T(I64({}, {0}))}},
                  "the sequence is empty");
  ExpectNodeError({.op_type = "SequenceAt", .inputs = {Seq(3), T(I64({2}, {0, 1}))}},
                  "must hold one element");
}

TEST(SequenceEraseTest, DefaultsToTheLastAndTakesNegativePositions) {
  EXPECT_EQ(Heads(Run1Value({.op_type = "SequenceErase", .inputs = {Seq(3)}})),
            (std::vector<float>{0, 1}));
  EXPECT_EQ(Heads(Run1Value({.op_type = "SequenceErase", .inputs = {Seq(3), T(I64({}, {-3}))}})),
            (std::vector<float>{1, 2}));
  EXPECT_EQ(Heads(Run1Value({.op_type = "SequenceErase", .inputs = {Seq(3), T(I64({}, {1}))}})),
            (std::vector<float>{0, 2}));
  RunValue last = Run1Value({.op_type = "SequenceErase", .inputs = {Seq(1)}});
  ASSERT_TRUE(last.is_sequence());
  EXPECT_TRUE(last.sequence().empty());
  EXPECT_EQ(last.elem_dtype(), DataType::kFloat32);
  ExpectNodeError(
      {.op_type = "SequenceErase", .inputs = {RunValue::Sequence(DataType::kFloat32, {})}},
      "the sequence is empty");
  ExpectNodeError({.op_type = "SequenceErase", .inputs = {Seq(2), T(I64({}, {2}))}},
                  "out of range");
}

TEST(SequenceLengthTest, IsAnInt64Scalar) {
  RunValue v = Run1Value({.op_type = "SequenceLength", .inputs = {Seq(3)}});
  ASSERT_TRUE(v.is_tensor());
  EXPECT_EQ(v.tensor().dtype(), DataType::kInt64);
  EXPECT_EQ(v.tensor().rank(), 0u);
  EXPECT_EQ(Values<int64_t>(v.tensor()), (std::vector<int64_t>{3}));
  v = Run1Value({.op_type = "SequenceLength", .inputs = {RunValue::Sequence(DataType::kInt8, {})}});
  EXPECT_EQ(Values<int64_t>(v.tensor()), (std::vector<int64_t>{0}));
  ExpectNodeError({.op_type = "SequenceLength", .inputs = {RunValue::None()}},
                  "must be a sequence but is an empty optional");
}

}  // namespace
}  // namespace qtune::runtime::testing
