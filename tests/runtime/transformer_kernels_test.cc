// The oneDNN transformer kernels (Softmax, LayerNormalization, Gelu, MatMul with two
// run-time operands, Transpose) against the reference tier, one op per graph, over odd sizes, axes,
// broadcasting and optional inputs. Each case says whether oneDNN must take it.
#include <gtest/gtest.h>

#include <functional>

#include "ir/builder.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/session.h"
#include "runtime/transformer_test_model.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

using ir::Attribute;

struct OpCase {
  std::string name;
  int64_t opset = 17;
  std::string op;
  std::vector<std::vector<int64_t>> input_sizes;     // run-time inputs in0, in1, ...
  std::vector<std::vector<int64_t>> constant_sizes;  // constant inputs after them
  std::vector<Attribute> attributes;
  bool expect_onednn = true;
};

void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

class TransformerKernelTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(TransformerKernelTest, MatchesReference) {
  const OpCase& c = GetParam();
  constexpr uint64_t kSeed = 2024;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  ir::GraphBuilder b(c.opset);
  testing::EncoderBuilder e(b, kSeed);
  std::vector<ir::Value*> ins;
  NamedTensors inputs;
  for (size_t i = 0; i < c.input_sizes.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    ins.push_back(b.Input(name, DataType::kFloat32, c.input_sizes[i]));
    inputs.push_back({name, testing::RandomTensor(c.input_sizes[i], kSeed + i)});
  }
  for (const auto& sizes : c.constant_sizes) ins.push_back(e.Random(sizes, 1.0f, 0.5f));
  b.Output(b.Op(c.op, ins, c.attributes));
  std::unique_ptr<ir::Graph> graph = b.Build();

  auto session = Session::Create(*graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ours = (*session)->Run(inputs);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  auto reference = RunReference(*graph, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  const Tensor& got = (*ours)[0].second;
  const Tensor& want = (*reference)[0].second;
  EXPECT_EQ(got.sizes(), want.sizes());
  EXPECT_LE(testing::RelativeL2(got, want), 1e-5);
  EXPECT_LE(testing::MaxAbsDiff(got, want), 1e-4);

  std::map<std::string, std::vector<int64_t>> sizes;
  for (size_t i = 0; i < c.input_sizes.size(); ++i)
    sizes["in" + std::to_string(i)] = c.input_sizes[i];
  auto plan = (*session)->Prepare(sizes);
  ASSERT_TRUE(plan.ok());
  std::string impl;
  for (const PlanStep& step : (*plan)->steps) {
    if (step.op_type == c.op) impl = step.kernel->Describe();
  }
  if (c.expect_onednn) {
    EXPECT_TRUE(impl.starts_with("onednn:") || impl.starts_with("native:")) << impl;
  }
  RecordProperty("kernel", impl);
}

std::vector<OpCase> Cases() {
  auto axis = [](int64_t a) { return std::vector<Attribute>{Attribute::Int("axis", a)}; };
  auto perm = [](std::vector<int64_t> p) {
    return std::vector<Attribute>{Attribute::Ints("perm", std::move(p))};
  };
  return {
      // Softmax: last axis at opset 13, a middle axis, and the coerced-2D rows before 13.
      {"softmax_last_1x1", 13, "Softmax", {{1, 1}}, {}, axis(-1)},
      {"softmax_last_3x7", 13, "Softmax", {{3, 7}}, {}, axis(-1)},
      {"softmax_attention_2x4x17x17", 13, "Softmax", {{2, 4, 17, 17}}, {}, axis(-1)},
      {"softmax_last_2x3x33", 13, "Softmax", {{2, 3, 33}}, {}, axis(-1)},
      {"softmax_middle_axis", 13, "Softmax", {{2, 33, 5}}, {}, axis(1), false},
      {"softmax_opset11_rows_of_15", 11, "Softmax", {{2, 3, 5}}, {}, axis(1)},
      {"softmax_opset11_default_axis", 11, "Softmax", {{4, 3, 5}}, {}, {}},
      // LayerNormalization: constant Scale/B over the last axis, no B, several trailing
      // axes, and a Scale that is a run-time input.
      {"layernorm_2x5x31", 17, "LayerNormalization", {{2, 5, 31}}, {{31}, {31}}, axis(-1)},
      {"layernorm_no_bias", 17, "LayerNormalization", {{7, 64}}, {{64}}, axis(-1)},
      {"layernorm_two_axes", 17, "LayerNormalization", {{2, 3, 7}}, {{3, 7}, {3, 7}}, axis(1)},
      {"layernorm_runtime_scale", 17, "LayerNormalization", {{5, 17}, {17}}, {}, axis(-1)},
      // Gelu, both forms, flat and rank 4.
      {"gelu_erf_3x17", 20, "Gelu", {{3, 17}}, {}, {}},
      {"gelu_tanh_3x17", 20, "Gelu", {{3, 17}}, {}, {Attribute::String("approximate", "tanh")}},
      {"gelu_erf_rank4", 20, "Gelu", {{1, 8, 5, 5}}, {}, {}},
      // MatMul with two run-time operands: attention, broadcast batches, plain 2-D, and a
      // constant batched B (not the prepacked 2-D kind).
      {"matmul_qk", 13, "MatMul", {{2, 4, 16, 8}, {2, 4, 8, 16}}, {}, {}},
      {"matmul_odd_sizes", 13, "MatMul", {{3, 5, 7}, {3, 7, 33}}, {}, {}},
      {"matmul_broadcast_batch", 13, "MatMul", {{2, 1, 5, 3}, {4, 3, 7}}, {}, {}},
      {"matmul_2d_runtime", 13, "MatMul", {{3, 5}, {5, 2}}, {}, {}},
      {"matmul_constant_batched_b", 13, "MatMul", {{2, 5, 3}}, {{2, 3, 4}}, {}},
      {"matmul_both_broadcast", 13, "MatMul", {{7, 1, 4, 3}, {1, 6, 3, 2}}, {}, {}},
      // Transpose: attention's head split and K^T, a full reversal, size-1 dims.
      {"transpose_heads", 13, "Transpose", {{2, 16, 4, 16}}, {}, perm({0, 2, 1, 3})},
      {"transpose_k", 13, "Transpose", {{2, 16, 4, 16}}, {}, perm({0, 2, 3, 1})},
      {"transpose_reverse_odd", 13, "Transpose", {{3, 5, 7}}, {}, {}},
      {"transpose_unit_dims", 13, "Transpose", {{1, 5, 1, 7}}, {}, perm({3, 2, 0, 1})},
      {"transpose_identity", 13, "Transpose", {{3, 5}}, {}, perm({0, 1})},
  };
}

INSTANTIATE_TEST_SUITE_P(Ops, TransformerKernelTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace qtune::runtime
