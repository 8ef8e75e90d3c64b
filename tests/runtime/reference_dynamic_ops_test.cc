// Reference kernels whose output sizes depend on input values (NonMaxSuppression,
// Compress, Unique, NonZero, TopK) or come from input values (CenterCropPad, Col2Im): the
// cases the ONNX node tests do not cover (empty results, ties, empty inputs, bad inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/reference_test_util.h"

namespace qtune::runtime {
namespace {

using testing::Bool;
using testing::F32;
using testing::I64;
using testing::Ints;
using testing::Iota;
using testing::OpCall;
using testing::Run1;
using testing::RunOp;
using testing::Values;

// Expects an InvalidArgument/Unimplemented error whose message names the node.
void ExpectNodeError(const OpCall& call, const std::string& fragment = "") {
  auto out = RunOp(call);
  ASSERT_FALSE(out.ok()) << call.op_type << " accepted a bad input";
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find(call.op_type + " '" + call.name + "'"), std::string::npos) << message;
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

// ------------------------------------------------------------------ NonMaxSuppression

// Four boxes in [y1, x1, y2, x2]: 0 and 1 overlap (IoU 0.81), 2 and 3 are apart.
Tensor FourBoxes() {
  return F32({1, 4, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 5, 1, 6, 0, 10, 1, 11});
}

OpCall Nms(Tensor boxes, Tensor scores, int64_t max_out, float iou, float score_min) {
  return {.op_type = "NonMaxSuppression",
          .inputs = {std::move(boxes), std::move(scores), Ints({max_out}), F32({1}, {iou}),
                     F32({1}, {score_min})},
          .name = "nms"};
}

TEST(ReferenceNms, NoBoxAboveTheScoreThresholdGivesZeroRows) {
  Tensor y = Run1(Nms(FourBoxes(), F32({1, 1, 4}, {0.1f, 0.2f, 0.3f, 0.4f}), 10, 0.5f, 0.4f));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(y.dtype(), DataType::kInt64);
}

TEST(ReferenceNms, OmittedMaxOutputSelectsNothing) {
  OpCall call{.op_type = "NonMaxSuppression",
              .inputs = {FourBoxes(), F32({1, 1, 4}, {0.9f, 0.8f, 0.7f, 0.6f})},
              .name = "nms"};
  EXPECT_EQ(Run1(call).sizes(), (std::vector<int64_t>{0, 3}));
  call.inputs.push_back(Ints({-3}));  // negative counts as 0
  EXPECT_EQ(Run1(call).sizes(), (std::vector<int64_t>{0, 3}));
}

TEST(ReferenceNms, EqualScoresGoByAscendingBoxIndex) {
  // All four boxes score 0.5: the order is 0, (1 suppressed by 0), 2, 3.
  Tensor y = Run1(Nms(FourBoxes(), F32({1, 1, 4}, {0.5f, 0.5f, 0.5f, 0.5f}), 10, 0.5f, 0.0f));
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{0, 0, 0, 0, 0, 2, 0, 0, 3}));
  // The same two boxes swapped: the tie again goes to index 0, which now suppresses 1.
  Tensor swapped = F32({1, 2, 4}, {0, 0.1f, 1, 1.1f, 0, 0, 1, 1});
  y = Run1(Nms(swapped, F32({1, 1, 2}, {0.7f, 0.7f}), 10, 0.5f, 0.0f));
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{0, 0, 0}));
}

TEST(ReferenceNms, OrderIsBatchThenClassThenScore) {
  Tensor boxes = F32({2, 2, 4}, {0, 0, 1, 1, 0, 5, 1, 6, 0, 0, 1, 1, 0, 5, 1, 6});
  Tensor scores = F32({2, 2, 2}, {0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.4f, 0.6f, 0.5f});
  Tensor y = Run1(Nms(boxes, scores, 1, 0.5f, 0.0f));
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0}));
}

TEST(ReferenceNms, IouEqualToTheThresholdDoesNotSuppress) {
  // Boxes of area 2 sharing area 1: IoU = 1 / 3.
  Tensor boxes = F32({1, 2, 4}, {0, 0, 1, 2, 0, 1, 1, 3});
  Tensor scores = F32({1, 1, 2}, {0.9f, 0.8f});
  EXPECT_EQ(Run1(Nms(boxes, scores, 5, 1.0f / 3.0f, 0.0f)).size(0), 2);
  EXPECT_EQ(Run1(Nms(boxes, scores, 5, 0.3f, 0.0f)).size(0), 1);
}

TEST(ReferenceNms, ZeroAreaBoxesNeverSuppress) {
  Tensor boxes = F32({1, 2, 4}, {0, 0, 0, 1, 0, 0, 0, 1});  // two identical lines
  Tensor y = Run1(Nms(boxes, F32({1, 1, 2}, {0.9f, 0.8f}), 5, 0.0f, 0.0f));
  EXPECT_EQ(y.size(0), 2);
}

TEST(ReferenceNms, CenterPointBoxesMatchCornerBoxes) {
  // The four boxes of FourBoxes() as [x_center, y_center, width, height].
  Tensor centers =
      F32({1, 4, 4}, {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 5.5f, 0.5f, 1, 1, 10.5f, 0.5f, 1, 1});
  Tensor scores = F32({1, 1, 4}, {0.6f, 0.9f, 0.7f, 0.8f});
  OpCall call = Nms(centers, scores, 10, 0.5f, 0.0f);
  call.attributes = {ir::Attribute::Int("center_point_box", 1)};
  EXPECT_EQ(Values<int64_t>(Run1(call)),
            Values<int64_t>(Run1(Nms(FourBoxes(), scores, 10, 0.5f, 0.0f))));
  EXPECT_EQ(Values<int64_t>(Run1(call)), (std::vector<int64_t>{0, 0, 1, 0, 0, 3, 0, 0, 2}));
}

TEST(ReferenceNms, BadInputsNameTheNode) {
  ExpectNodeError(Nms(FourBoxes(), F32({1, 1, 3}, {1, 2, 3}), 1, 0.5f, 0), "scores must be");
  ExpectNodeError(Nms(F32({1, 2, 3}, {0, 0, 0, 0, 0, 0}), F32({1, 1, 2}, {1, 2}), 1, 0.5f, 0),
                  "boxes must be");
  OpCall bad_attr = Nms(FourBoxes(), F32({1, 1, 4}, {1, 2, 3, 4}), 1, 0.5f, 0);
  bad_attr.attributes = {ir::Attribute::Int("center_point_box", 2)};
  ExpectNodeError(bad_attr, "center_point_box");
}

// ------------------------------------------------------------------ Compress

TEST(ReferenceCompress, AllFalseConditionGivesAnEmptyAxis) {
  OpCall call{.op_type = "Compress",
              .inputs = {Iota({2, 3}), Bool({3}, {false, false, false})},
              .attributes = {ir::Attribute::Int("axis", 1)},
              .name = "c"};
  EXPECT_EQ(Run1(call).sizes(), (std::vector<int64_t>{2, 0}));
  call.attributes.clear();  // flattened
  EXPECT_EQ(Run1(call).sizes(), (std::vector<int64_t>{0}));
}

TEST(ReferenceCompress, ShortConditionCountsAsFalsePastItsEnd) {
  OpCall call{.op_type = "Compress",
              .inputs = {Iota({3, 2}), Bool({2}, {false, true})},
              .attributes = {ir::Attribute::Int("axis", -2)},
              .name = "c"};
  Tensor y = Run1(call);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{2, 3}));
  call.attributes.clear();
  EXPECT_EQ(Values<float>(Run1(call)), (std::vector<float>{1}));
}

TEST(ReferenceCompress, TrueConditionPastTheAxisIsAnError) {
  OpCall call{
      .op_type = "Compress", .inputs = {Iota({2}), Bool({3}, {true, false, true})}, .name = "c"};
  ExpectNodeError(call, "past the input's length");
  call.inputs[1] = Bool({3}, {true, true, false});  // false past the end is fine
  EXPECT_EQ(Values<float>(Run1(call)), (std::vector<float>{0, 1}));
  call.inputs[1] = Bool({1, 2}, {true, true});
  ExpectNodeError(call, "1-D");
}

// ------------------------------------------------------------------ Unique

TEST(ReferenceUnique, EmptyInputGivesEmptyOutputs) {
  auto out = RunOp({.op_type = "Unique", .inputs = {F32({0, 3}, {})}, .num_outputs = 4});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  for (const Tensor& t : *out) EXPECT_EQ(t.sizes(), (std::vector<int64_t>{0}));
}

TEST(ReferenceUnique, NaNsAreEqualAndSortLast) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out =
      RunOp({.op_type = "Unique", .inputs = {F32({5}, {nan, 2, nan, -1, 2})}, .num_outputs = 4});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> y = Values<float>((*out)[0]);
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], -1);
  EXPECT_EQ(y[1], 2);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{2, 1, 2, 0, 1}));
  EXPECT_EQ(Values<int64_t>((*out)[3]), (std::vector<int64_t>{1, 2, 2}));
}

TEST(ReferenceUnique, UnsortedSlicesKeepFirstOccurrenceOrder) {
  // Rows along axis 0: r0 = [3, 1], r1 = [0, 5], r2 = [3, 1].
  auto out = RunOp({.op_type = "Unique",
                    .inputs = {I64({3, 2}, {3, 1, 0, 5, 3, 1})},
                    .attributes = {ir::Attribute::Int("axis", 0), ir::Attribute::Int("sorted", 0)},
                    .num_outputs = 4});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{3, 1, 0, 5}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(Values<int64_t>((*out)[3]), (std::vector<int64_t>{2, 1}));
}

TEST(ReferenceUnique, ColumnsAlongTheLastAxisAreSortedLexicographically) {
  // Columns: c0 = [2, 0], c1 = [1, 9], c2 = [2, 0], c3 = [1, 3].
  auto out = RunOp({.op_type = "Unique",
                    .inputs = {I64({2, 4}, {2, 1, 2, 1, 0, 9, 0, 3})},
                    .attributes = {ir::Attribute::Int("axis", -1)},
                    .num_outputs = 4});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, 1, 2, 3, 9, 0}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{2, 1, 2, 0}));
  EXPECT_EQ(Values<int64_t>((*out)[3]), (std::vector<int64_t>{1, 1, 2}));
}

TEST(ReferenceUnique, BadAxisNamesTheNode) {
  ExpectNodeError({.op_type = "Unique",
                   .inputs = {Iota({2, 2})},
                   .attributes = {ir::Attribute::Int("axis", 2)},
                   .name = "u"});
}

// ------------------------------------------------------------------ NonZero, TopK

TEST(ReferenceNonZero, ScalarCountsAsOneElementVector) {
  EXPECT_EQ(Run1({.op_type = "NonZero", .inputs = {Tensor::Scalar<float>(3)}}).sizes(),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(Run1({.op_type = "NonZero", .inputs = {Tensor::Scalar<float>(0)}}).sizes(),
            (std::vector<int64_t>{1, 0}));
}

TEST(ReferenceNonZero, EmptyInputGivesRankByZero) {
  EXPECT_EQ(Run1({.op_type = "NonZero", .inputs = {F32({0, 3}, {})}}).sizes(),
            (std::vector<int64_t>{2, 0}));
}

TEST(ReferenceTopK, ZeroKGivesAnEmptyAxis) {
  auto out = RunOp({.op_type = "TopK", .inputs = {Iota({2, 3}), Ints({0})}, .num_outputs = 2});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].sizes(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ((*out)[1].sizes(), (std::vector<int64_t>{2, 0}));
}

TEST(ReferenceTopK, KAboveTheAxisSizeNamesTheNode) {
  ExpectNodeError(
      {.op_type = "TopK", .inputs = {Iota({2, 3}), Ints({4})}, .num_outputs = 2, .name = "top"},
      "K = 4");
  ExpectNodeError(
      {.op_type = "TopK", .inputs = {Iota({2, 3}), Ints({-1})}, .num_outputs = 2, .name = "top"},
      "K = -1");
}

TEST(ReferenceTopK, SmallestWithTiesKeepsTheLowerIndexFirst) {
  auto out =
      RunOp({.op_type = "TopK",
             .inputs = {F32({5}, {3, 1, 2, 1, 0}), Ints({3})},
             .attributes = {ir::Attribute::Int("largest", 0), ir::Attribute::Int("sorted", 1)},
             .num_outputs = 2});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 1, 1}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{4, 1, 3}));
}

// ------------------------------------------------------------------ CenterCropPad, Col2Im

TEST(ReferenceCenterCropPad, CropsOneAxisAndPadsAnother) {
  Tensor y = Run1({.op_type = "CenterCropPad", .inputs = {Iota({3, 4}), Ints({2, 6})}});
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 7, 0}));
}

TEST(ReferenceCenterCropPad, OddDifferencesPutTheExtraAtTheEnd) {
  // Pad 2 -> 5 along the last axis (one before, two after); crop 5 -> 2 along axis 0
  // (rows 1 and 2).
  Tensor y = Run1({.op_type = "CenterCropPad",
                   .inputs = {Iota({5, 2}), Ints({2, 5})},
                   .attributes = {ir::Attribute::Ints("axes", {0, -1})}});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{0, 2, 3, 0, 0, 0, 4, 5, 0, 0}));
}

TEST(ReferenceCenterCropPad, BadShapeNamesTheNode) {
  ExpectNodeError({.op_type = "CenterCropPad", .inputs = {Iota({3, 4}), Ints({2})}, .name = "ccp"},
                  "entries");
  ExpectNodeError(
      {.op_type = "CenterCropPad", .inputs = {Iota({3, 4}), Ints({2, -1})}, .name = "ccp"},
      "negative");
}

TEST(ReferenceCol2Im, OverlappingBlocksAreSummed) {
  // Image [1, 3], block [1, 2], stride 1: two positions; columns [[1, 2], [10, 20]].
  Tensor y = Run1({.op_type = "Col2Im",
                   .inputs = {F32({1, 2, 2}, {1, 2, 10, 20}), Ints({1, 3}), Ints({1, 2})},
                   .opset = 18});
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{1, 1, 1, 3}));
  EXPECT_EQ(Values<float>(y), (std::vector<float>{1, 12, 20}));
}

TEST(ReferenceCol2Im, StridesAndPadsSkipPixels) {
  // Image [4], block [2], stride 2, pads 1/1: positions at -1, 1, 3; the padded pixels
  // (-1 and 4) are dropped.
  Tensor y = Run1(
      {.op_type = "Col2Im",
       .inputs = {F32({1, 2, 3}, {1, 2, 3, 4, 5, 6}), Ints({4}), Ints({2})},
       .attributes = {ir::Attribute::Ints("strides", {2}), ir::Attribute::Ints("pads", {1, 1})},
       .opset = 18});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{4, 2, 5, 3}));
}

TEST(ReferenceCol2Im, MismatchedBlockCountNamesTheNode) {
  ExpectNodeError({.op_type = "Col2Im",
                   .inputs = {Iota({1, 2, 3}), Ints({1, 3}), Ints({1, 2})},
                   .opset = 18,
                   .name = "c2i"},
                  "block positions");
  ExpectNodeError({.op_type = "Col2Im",
                   .inputs = {Iota({1, 2, 2}), Ints({1, 3}), Ints({1, 9})},
                   .opset = 18,
                   .name = "c2i"},
                  "does not fit");
}

}  // namespace
}  // namespace qtune::runtime
