// qtune::Attention on its two fast kernels against the reference kernel
// (attention_reference.cc): the native AVX-512 one (native_attention.cc; on CPUs without
// AVX-512F it must decline) and the three oneDNN steps (onednn_attention.cc, what those
// CPUs run). Head sizes and key counts below, at and above the 16-lane vectors and the
// 64-column tiles, query counts around the 24-row blocks and 6-row tiles, batches and
// heads, every mask broadcast, masks of -infinity, large scores (the softmax's maximum),
// at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/kernel_test_util.h"
#include "runtime/kernels/avx512_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

std::vector<NamedFactory> Factories() {
  return {{"native", &CreateNativeAttentionKernel, CpuHasAvx512F()},
          {"onednn", &CreateOnednnAttentionKernel, true}};
}

struct Geometry {
  int64_t batch = 1, heads = 1, queries = 1, keys = 1, head_size = 1;
};

// Q [B, S, H*D], K and V [B, T, H*D] uniform in [-range, range), `mask` (omitted when
// invalid), the scale 1/sqrt(D).
KernelCase AttentionCase(const NamedFactory& f, const Geometry& g, std::mt19937& rng, uint32_t seed,
                         Tensor mask = Tensor(), float range = 1.0f) {
  KernelCase c;
  c.factory = f.create;
  c.op_type = "Attention";
  c.domain = "qtune";
  c.seed = seed;
  // oneDNN may offer only its reference implementation on some CPUs (its kernel declines).
  c.expect = !f.applies                                 ? Expect::kNotApplicable
             : f.create == &CreateOnednnAttentionKernel ? Expect::kFastPathIfSupported
                                                        : Expect::kFastPath;
  const float scale = 1.0f / std::sqrt(static_cast<float>(g.head_size));
  c.attributes = {ir::Attribute::Int("num_heads", g.heads), ir::Attribute::Float("scale", scale)};
  const int64_t hidden = g.heads * g.head_size;
  c.inputs = {Dynamic(RandomTensor({g.batch, g.queries, hidden}, rng, -range, range)),
              Dynamic(RandomTensor({g.batch, g.keys, hidden}, rng, -range, range)),
              Dynamic(RandomTensor({g.batch, g.keys, hidden}, rng, -range, range))};
  c.label = std::string(f.name) + " B" + std::to_string(g.batch) + " H" + std::to_string(g.heads) +
            " S" + std::to_string(g.queries) + " T" + std::to_string(g.keys) + " D" +
            std::to_string(g.head_size);
  if (mask.is_valid()) {
    c.label += " mask " + SizesString(mask.sizes());
    c.inputs.push_back(Dynamic(std::move(mask)));
  }
  c.tolerance = 1e-5;
  return c;
}

TEST(AttentionKernels, MatchReferenceOverSizes) {
  const uint32_t seed = TestSeed(4401);
  std::mt19937 rng(seed);
  AtOneAndTwoThreads([&] {
    for (const NamedFactory& f : Factories()) {
      for (int64_t head_size : {1, 5, 16, 17, 64, 80}) {
        for (int64_t keys : {1, 5, 16, 17, 64, 65, 197}) {
          for (int64_t queries : {1, 6, 7, 24, 25, 49}) {
            Geometry g{1 + static_cast<int64_t>(rng() % 2), 1 + static_cast<int64_t>(rng() % 3),
                       queries, keys, head_size};
            EXPECT_TRUE(CheckKernel(AttentionCase(f, g, rng, seed)));
          }
        }
      }
    }
  });
}

TEST(AttentionKernels, ViTAndBertSizes) {
  const uint32_t seed = TestSeed(4402);
  std::mt19937 rng(seed);
  AtOneAndTwoThreads([&] {
    for (const NamedFactory& f : Factories()) {
      EXPECT_TRUE(CheckKernel(AttentionCase(f, {1, 3, 197, 197, 64}, rng, seed)));
      EXPECT_TRUE(CheckKernel(AttentionCase(f, {1, 12, 128, 128, 64}, rng, seed)));
    }
  });
}

TEST(AttentionKernels, MasksInEveryBroadcast) {
  const uint32_t seed = TestSeed(4403);
  std::mt19937 rng(seed);
  const Geometry g{2, 3, 30, 21, 8};  // scores [2, 3, 30, 21]
  const std::vector<std::vector<int64_t>> mask_sizes = {
      {1},           {21},           {30, 21},  {30, 1}, {2, 1, 1, 21}, {2, 1, 30, 21},
      {1, 3, 1, 21}, {2, 3, 30, 21}, {3, 30, 1}};
  AtOneAndTwoThreads([&] {
    for (const NamedFactory& f : Factories()) {
      for (const std::vector<int64_t>& sizes : mask_sizes) {
        EXPECT_TRUE(CheckKernel(AttentionCase(f, g, rng, seed, RandomTensor(sizes, rng, -3, 3))));
      }
    }
  });
}

TEST(AttentionKernels, MaskedKeysAndLargeScores) {
  const uint32_t seed = TestSeed(4404);
  std::mt19937 rng(seed);
  const Geometry g{2, 2, 26, 40, 16};
  AtOneAndTwoThreads([&] {
    for (const NamedFactory& f : Factories()) {
      // A padding mask: the last keys of each batch row at -infinity (never a whole row).
      Tensor padding = *Tensor::Allocate(DataType::kFloat32, {2, 1, 1, 40});
      float* m = padding.data<float>();
      for (int64_t j = 0; j < 40; ++j) {
        m[j] = j < 33 ? 0.0f : -std::numeric_limits<float>::infinity();
        m[40 + j] = j < 7 ? 0.0f : -10000.0f;
      }
      EXPECT_TRUE(CheckKernel(AttentionCase(f, g, rng, seed, padding)));
      // Scores in the hundreds: exp would overflow without subtracting the row maximum.
      KernelCase large = AttentionCase(f, g, rng, seed, Tensor(), 8.0f);
      large.tolerance = 1e-4;  // nearly one-hot rows: the products' rounding shows
      EXPECT_TRUE(CheckKernel(large));
    }
  });
}

TEST(AttentionKernels, DeclineAMaskThatDoesNotBroadcast) {
  // A [5, 3] mask against scores [1, 2, 5, 6]. The reference rejects it too, so the
  // factories are asked alone (the harness would run the reference first).
  ir::GraphBuilder builder(17);
  builder.ImportOpset("qtune", 1);
  const ValueInfo q{DataType::kFloat32, {1, 5, 8}, {}}, kv{DataType::kFloat32, {1, 6, 8}, {}};
  const ValueInfo mask{DataType::kFloat32, {5, 3}, {}};
  std::vector<ir::Value*> in;
  for (const ValueInfo* info : {&q, &kv, &kv, &mask}) {
    in.push_back(builder.Input("in" + std::to_string(in.size()), DataType::kFloat32, info->sizes));
  }
  ir::OpOptions options;
  options.name = "attention";
  options.domain = "qtune";
  builder.Output(
      builder.MultiOp("Attention", in, 1, {ir::Attribute::Int("num_heads", 2)}, options)[0]);
  std::unique_ptr<ir::Graph> graph = builder.Build();
  for (const NamedFactory& f : Factories()) {
    std::string why;
    KernelRequest request{*graph->FindNode("attention"), 1, 1, {&q, &kv, &kv, &mask}, {&q}, {}};
    request.input_layouts.assign(4, Layout::kPlain);
    request.why_not = &why;
    auto created = f.create(request);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    EXPECT_FALSE(created->has_value()) << f.name;
    EXPECT_EQ(why, "the mask does not broadcast") << f.name;
  }
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
