// SplitToSequence, ConcatFromSequence and the other sequence and optional ops against ONNX
// Runtime: ONNX 1.12's node tests have no SplitToSequence or ConcatFromSequence cases, so
// a model chaining them (tensor in, tensors out) runs in ONNX Runtime and node by node
// through the value kernels (util/value_node_runner.h), and the outputs must be identical:
// these ops only move data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/value_node_runner.h"

namespace qtune::runtime {
namespace {

namespace fs = std::filesystem;
using ir::Attribute;
using ir::Value;

Tensor Iota(std::vector<int64_t> sizes) {
  Tensor t = *Tensor::Allocate(DataType::kFloat32, std::move(sizes));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

// x [3,4,5] through every sequence op and the optional ops; every output is a tensor.
std::unique_ptr<ir::Graph> BuildSequenceModel(int64_t opset) {
  ir::GraphBuilder b(opset);
  Value* x = b.Input("x", DataType::kFloat32, {3, 4, 5});
  Value* split_1_3 = b.Initializer("split_1_3", Tensor::FromVector<int64_t>({2}, {1, 3}));
  Value* two = b.Initializer("two", Tensor::Scalar<int64_t>(2));
  Value* minus_one = b.Initializer("minus_one", Tensor::Scalar<int64_t>(-1));
  Value* zero = b.Initializer("zero", Tensor::Scalar<int64_t>(0));
  Value* one = b.Initializer("one", Tensor::Scalar<int64_t>(1));
  auto concat = [&](Value* seq, int64_t axis, int64_t new_axis, const std::string& name) {
    return b.Op("ConcatFromSequence", {seq},
                {Attribute::Int("axis", axis), Attribute::Int("new_axis", new_axis)},
                {.output_names = {name}});
  };
  // Split along axis 1 into [1, 3] and join again.
  Value* s1 = b.Op("SplitToSequence", {x, split_1_3}, {Attribute::Int("axis", 1)});
  b.Output(concat(s1, 1, 0, "rejoined"));
  // Chunks of 1 along the last axis without it, stacked back at the end and at the front.
  Value* s2 =
      b.Op("SplitToSequence", {x}, {Attribute::Int("axis", -1), Attribute::Int("keepdims", 0)});
  b.Output(concat(s2, -1, 1, "stacked_last"));
  b.Output(concat(s2, 0, 1, "stacked_first"));
  // Chunks of 2 along axis 2 (2, 2, 1): the last one, the count, the first moved behind it.
  Value* s3 = b.Op("SplitToSequence", {x, two}, {Attribute::Int("axis", 2)});
  b.Output(b.Op("SequenceAt", {s3, minus_one}, {}, {.output_names = {"last_chunk"}}));
  b.Output(b.Op("SequenceLength", {s3}, {}, {.output_names = {"chunk_count"}}));
  Value* first = b.Op("SequenceAt", {s3, zero});
  Value* erased = b.Op("SequenceErase", {s3, zero});
  Value* moved = b.Op("SequenceInsert", {erased, first, one});
  b.Output(concat(moved, 2, 0, "reordered"));
  // An empty sequence grown by two inserts (at the end, then at the front).
  Value* empty = b.Op("SequenceEmpty", {}, {Attribute::Int("dtype", 1)});
  Value* grown = b.Op("SequenceInsert", {b.Op("SequenceInsert", {empty, x}), first, zero});
  b.Output(concat(grown, -1, 0, "grown"));
  Value* pair = b.Op("SequenceConstruct", {x, first});
  b.Output(concat(pair, 2, 0, "constructed"));
  Value* erased_last = b.Op("SequenceErase", {pair});
  b.Output(b.Op("SequenceLength", {erased_last}, {}, {.output_names = {"after_erase"}}));
  // Optionals.
  Value* opt = b.Op("Optional", {x});
  b.Output(b.Op("OptionalHasElement", {opt}, {}, {.output_names = {"has"}}));
  b.Output(b.Op("OptionalGetElement", {opt}, {}, {.output_names = {"got"}}));
  return b.Build();
}

void ExpectIdentical(const Tensor& ours, const Tensor& ort) {
  ASSERT_EQ(ours.dtype(), ort.dtype());
  ASSERT_EQ(ours.sizes(), ort.sizes());
  EXPECT_EQ(std::memcmp(ours.raw_data(), ort.raw_data(), ours.byte_size()), 0);
}

TEST(ValueKernelsOrtTest, SequenceOpsMatchOnnxRuntimeExactly) {
  if (!testing::OrtAvailable()) QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime is not installed";
  for (int64_t opset : {15, 18}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    std::unique_ptr<ir::Graph> graph = BuildSequenceModel(opset);
    std::vector<std::string> names;
    for (const Value* v : graph->outputs()) names.push_back(v->name());
    const Tensor x = Iota({3, 4, 5});
    fs::path path = fs::temp_directory_path() / ("qtune_seq_" + std::to_string(opset) + "_" +
                                                 std::to_string(getpid()) + ".onnx");
    ASSERT_TRUE(ir::SaveModel(*graph, path.string()).ok());
    auto ort = testing::RunOrt(path.string(), {{"x", x}}, names);
    fs::remove(path);
    ASSERT_TRUE(ort.ok()) << ort.status().ToString();
    auto ours = testing::RunNodeByNode(*graph, {{"x", RunValue::Of(x)}});
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    ASSERT_EQ(ort->size(), names.size());
    ASSERT_EQ(ours->size(), ort->size());
    for (size_t i = 0; i < ort->size(); ++i) {
      SCOPED_TRACE("output " + names[i]);
      ASSERT_TRUE((*ours)[i].is_tensor());
      ExpectIdentical((*ours)[i].tensor(), (*ort)[i].second);
    }
  }
}

}  // namespace
}  // namespace qtune::runtime
