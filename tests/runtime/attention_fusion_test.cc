// qtune::Attention: the fusion of Q·Kᵀ [scale] [mask] Softmax ·V with its head
// split/merge Transposes, on randomized sizes (heads 1/2/3, query and key lengths
// 1/7/17/33, odd head sizes, with and without scale and mask). Each case checks the op
// counts of the compiled plan, that a fast kernel runs it, and that the fast tier
// and the fused graph on the reference tier match the reference executor on the unfused
// graph.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "ir/builder.h"
#include "runtime/kernels/avx512_util.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/session.h"
#include "runtime/transformer_test_model.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

using ir::Attribute;
using ir::Value;

enum class Scale { kNone, kMul, kDiv };
enum class Mask { kNone, kPerKey, kPerQueryAndKey };

struct AttentionCase {
  int64_t batch = 2, heads = 2, seq = 7, keys = 7, head_size = 5;
  Scale scale = Scale::kDiv;
  Mask mask = Mask::kNone;
  std::string Label() const {
    return "B" + std::to_string(batch) + " H" + std::to_string(heads) + " S" + std::to_string(seq) +
           " T" + std::to_string(keys) + " D" + std::to_string(head_size) + " scale" +
           std::to_string(int(scale)) + " mask" + std::to_string(int(mask));
  }
};

struct Built {
  std::unique_ptr<ir::Graph> graph;
  NamedTensors inputs;
  std::map<std::string, std::vector<int64_t>> sizes;
};

Built BuildAttention(const AttentionCase& c, uint64_t seed, bool extra_reader = false,
                     int64_t opset = 13, bool softmax_axis = true) {
  ir::GraphBuilder b(opset);
  testing::EncoderBuilder e(b, seed);
  const int64_t hidden = c.heads * c.head_size;
  Built out;
  auto input = [&](const std::string& name, std::vector<int64_t> sizes) {
    out.sizes[name] = sizes;
    out.inputs.emplace_back(name, testing::RandomTensor(sizes, seed + out.inputs.size() + 1));
    return b.Input(name, DataType::kFloat32, sizes);
  };
  Value* q = input("q", {c.batch, c.seq, hidden});
  Value* k = input("k", {c.batch, c.keys, hidden});
  Value* v = input("v", {c.batch, c.keys, hidden});
  auto split = [&](Value* x, std::vector<int64_t> perm) {
    Value* r = b.Op("Reshape", {x, e.Int64s({0, 0, c.heads, c.head_size})});
    return b.Op("Transpose", {r}, {Attribute::Ints("perm", perm)});
  };
  Value* qh = split(q, {0, 2, 1, 3});
  Value* scores = b.Op("MatMul", {qh, split(k, {0, 2, 3, 1})});
  const float root = std::sqrt(float(c.head_size));
  if (c.scale == Scale::kMul) scores = b.Op("Mul", {e.Scalar(1.0f / root), scores});
  if (c.scale == Scale::kDiv) scores = b.Op("Div", {scores, e.Scalar(root)});
  if (c.mask == Mask::kPerKey)
    scores = b.Op("Add", {scores, input("mask", {c.batch, 1, 1, c.keys})});
  if (c.mask == Mask::kPerQueryAndKey) {
    scores = b.Op("Add", {input("mask", {c.seq, c.keys}), scores});
  }
  Value* probs = softmax_axis ? b.Op("Softmax", {scores}, {Attribute::Int("axis", -1)})
                              : b.Op("Softmax", {scores});
  Value* context = b.Op("Transpose", {b.Op("MatMul", {probs, split(v, {0, 2, 1, 3})})},
                        {Attribute::Ints("perm", {0, 2, 1, 3})});
  b.Output(b.Op("Reshape", {context, e.Int64s({0, 0, hidden})}));
  if (extra_reader) b.Output(qh);
  out.graph = b.Build();
  return out;
}

std::map<std::string, int> CompiledOps(Session& session, const Built& built,
                                       std::string* attention_kernel) {
  std::map<std::string, int> counts;
  auto plan = session.Prepare(built.sizes);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return counts;
  for (const ir::Node* node : (*plan)->graph->nodes()) ++counts[node->op_type()];
  for (const PlanStep& step : (*plan)->steps) {
    if (step.op_type == "Attention") *attention_kernel = step.kernel->Describe();
  }
  return counts;
}

double Distance(const Built& built, const SessionOptions& options) {
  auto session = Session::Create(*built.graph, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return INFINITY;
  auto ours = (*session)->Run(built.inputs);
  auto reference = RunReference(*built.graph, built.inputs);
  EXPECT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_TRUE(reference.ok()) << reference.status().ToString();
  if (!ours.ok() || !reference.ok()) return INFINITY;
  return testing::RelativeL2((*ours)[0].second, (*reference)[0].second);
}

TEST(AttentionFusion, RandomizedCasesFuseAndMatchTheReference) {
  const uint64_t seed = 2611;
  std::mt19937 rng(seed);
  const int64_t lengths[] = {1, 7, 17, 33};
  for (int i = 0; i < 24; ++i) {
    AttentionCase c;
    c.batch = 1 + rng() % 2;
    c.heads = 1 + i % 3;
    c.seq = lengths[rng() % 4];
    c.keys = i % 4 == 0 ? lengths[rng() % 4] : c.seq;  // cross attention now and then
    c.head_size = 1 + 2 * (rng() % 5);                 // odd: 1..9
    c.scale = static_cast<Scale>(i % 3);
    c.mask = static_cast<Mask>((i / 3) % 3);
    SCOPED_TRACE(c.Label() + ", seed " + std::to_string(seed + i));
    Built built = BuildAttention(c, seed + i);
    auto session = Session::Create(*built.graph, SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    std::string kernel;
    std::map<std::string, int> ops = CompiledOps(**session, built, &kernel);
    EXPECT_EQ(ops["Attention"], 1);
    for (const char* gone : {"MatMul", "Softmax", "Transpose", "Mul", "Div", "Add"}) {
      EXPECT_EQ(ops.count(gone), 0u) << gone;
    }
    // The native kernel where the CPU has AVX-512F, else oneDNN's.
    EXPECT_EQ(kernel.rfind(CpuHasAvx512F() ? "native:attention:" : "onednn:attention:", 0), 0u)
        << kernel;
    EXPECT_LE(Distance(built, SessionOptions{}), 1e-5);
    SessionOptions two_threads;
    two_threads.threads = 2;
    EXPECT_LE(Distance(built, two_threads), 1e-5) << "2 threads";
    SessionOptions reference_tier;
    reference_tier.use_onednn = false;
    EXPECT_LE(Distance(built, reference_tier), 1e-5);
  }
}

TEST(AttentionFusion, HeadSplitWithASecondReaderIsNotFused) {
  Built built = BuildAttention(AttentionCase{}, 5, /*extra_reader=*/true);
  auto session = Session::Create(*built.graph, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::string kernel;
  std::map<std::string, int> ops = CompiledOps(**session, built, &kernel);
  EXPECT_EQ(ops.count("Attention"), 0u);
  EXPECT_EQ(ops["MatMul"], 2);
  EXPECT_LE(Distance(built, SessionOptions{}), 1e-5);
}

TEST(AttentionFusion, SoftmaxDefaultAxisFollowsTheOpset) {
  // Opset 11: the default axis is 1, a softmax over [H*S*T] rows of the coerced 2-D input,
  // not attention; opset 13: the default is the last axis.
  for (int64_t opset : {11, 13}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    Built built = BuildAttention(AttentionCase{}, 9, false, opset, /*softmax_axis=*/false);
    auto session = Session::Create(*built.graph, SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    std::string kernel;
    std::map<std::string, int> ops = CompiledOps(**session, built, &kernel);
    EXPECT_EQ(ops.count("Attention"), opset >= 13 ? 1u : 0u);
    EXPECT_LE(Distance(built, SessionOptions{}), 1e-5);
  }
}

}  // namespace
}  // namespace qtune::runtime
