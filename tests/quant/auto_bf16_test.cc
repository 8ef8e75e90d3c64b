// Per-node bf16 in qtune's engine (the `bf16` format of `quantize --auto`):
// CompileOptions::bf16_nodes picks the nodes (fused nodes made from them included), and a
// model's metadata_props entry "qtune.bf16_nodes" reaches the Session. Checked against the
// fp32 reference: a bf16 layer's output is within bf16 tolerance of fp32 and not equal to
// it (the rounding is real), and the layer left out stays bit-identical to fp32.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "ir/builder.h"
#include "quant/auto_groups.h"
#include "runtime/compile.h"
#include "runtime/session.h"

namespace qtune::runtime {
namespace {

Tensor Random(std::vector<int64_t> sizes, uint32_t seed) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return Tensor::FromVector(sizes, v);
}

// x -> conv_a -> Relu -> conv_b, each conv 32 -> 32 channels 3x3. Outputs: both convs.
std::unique_ptr<ir::Graph> TwoConvs() {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 32, 12, 12});
  ir::Value* wa = b.Initializer("wa", Random({32, 32, 3, 3}, 1));
  ir::Value* wb = b.Initializer("wb", Random({32, 32, 3, 3}, 2));
  auto pads = ir::Attribute::Ints("pads", {1, 1, 1, 1});
  ir::Value* a = b.Op("Conv", {x, wa}, {pads}, {.name = "conv_a", .output_names = {"a"}});
  ir::Value* r = b.Op("Relu", {a}, {}, {.name = "relu", .output_names = {"r"}});
  ir::Value* y = b.Op("Conv", {r, wb}, {pads}, {.name = "conv_b", .output_names = {"y"}});
  b.Output(y);
  return b.Build();
}

NamedTensors RunGraph(const ir::Graph& graph, const SessionOptions& options) {
  auto session = Session::Create(graph, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  auto out = (*session)->Run({{"x", Random({1, 32, 12, 12}, 3)}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return std::move(out).value();
}

double RelativeL2(const Tensor& ref, const Tensor& got) {
  double s = 0, n = 0;
  auto r = ref.span<float>();
  auto g = got.span<float>();
  for (size_t i = 0; i < r.size(); ++i) {
    s += double(r[i]) * r[i];
    n += (double(r[i]) - g[i]) * (double(r[i]) - g[i]);
  }
  return std::sqrt(n / s);
}

// The precision is a typed property of each plan step: the FusedConv made from conv_a
// (conv_a + Relu) computes in bf16 because conv_a was named, whatever the fused node is
// called; a name that merely starts alike ("conv") marks nothing.
TEST(Bf16Nodes, FusedNodeInheritsThePrecisionOfItsFirstNode) {
  if (!quant::CpuHasBf16()) GTEST_SKIP() << "this CPU has neither avx512_bf16 nor amx_bf16";
  auto graph = TwoConvs();
  auto precisions = [&](std::set<std::string> nodes) {
    CompileOptions options;
    options.bf16_nodes = std::move(nodes);
    auto plan = Compile(*graph, {{"x", {1, 32, 12, 12}}}, options);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    std::map<std::string, Precision> out;
    for (const PlanStep& step : (*plan)->steps)
      out[step.op_type + " " + step.node_name] = step.precision;
    return out;
  };
  const auto by_conv_a = precisions({"conv_a"});
  ASSERT_TRUE(by_conv_a.count("FusedConv conv_a_fused")) << "conv_a + Relu fuse";
  EXPECT_EQ(by_conv_a.at("FusedConv conv_a_fused"), Precision::kBfloat16);
  EXPECT_EQ(by_conv_a.at("Conv conv_b"), Precision::kFloat32);
  for (const auto& [step, precision] : precisions({"conv"})) {
    EXPECT_EQ(precision, Precision::kFloat32) << step;
  }
  for (const auto& [step, precision] : precisions({})) {
    EXPECT_EQ(precision, Precision::kFloat32) << step;
  }
}

TEST(Bf16Nodes, OnlyTheNamedLayerComputesInBf16) {
  if (!quant::CpuHasBf16()) GTEST_SKIP() << "this CPU has neither avx512_bf16 nor amx_bf16";
  auto graph = TwoConvs();
  SessionOptions fp32;
  SessionOptions only_b;
  only_b.bf16_nodes = {"conv_b"};
  auto session = Session::Create(*graph, only_b);
  ASSERT_TRUE(session.ok());
  auto plan = (*session)->Prepare({{"x", {1, 32, 12, 12}}});
  ASSERT_TRUE(plan.ok());
  int bf16_steps = 0;
  for (const PlanStep& step : (*plan)->steps) {
    if (step.kernel == nullptr) continue;
    const bool bf16 = step.kernel->Describe().find("bf16") != std::string::npos;
    bf16_steps += bf16;
    if (step.node_name.rfind("conv_a", 0) == 0) {
      EXPECT_FALSE(bf16) << step.node_name;
    }
  }
  EXPECT_EQ(bf16_steps, 1) << "conv_b (fused) and nothing else";

  Tensor ref = RunGraph(*graph, fp32).front().second;
  Tensor got = RunGraph(*graph, only_b).front().second;
  const double error = RelativeL2(ref, got);
  std::printf("conv_b in bf16 vs fp32: relative L2 %.2e\n", error);
  EXPECT_GT(error, 0.0) << "bf16 rounding must change something";
  EXPECT_LT(error, 1e-2) << "bf16 inputs and weights, fp32 accumulation: ~3 significant digits";
}

TEST(Bf16Nodes, ModelMetadataReachesTheSession) {
  if (!quant::CpuHasBf16()) GTEST_SKIP() << "this CPU has neither avx512_bf16 nor amx_bf16";
  auto graph = TwoConvs();
  Tensor ref = RunGraph(*graph, {}).front().second;
  SessionOptions by_options;
  by_options.bf16_nodes = {"conv_a"};
  Tensor direct = RunGraph(*graph, by_options).front().second;
  graph->info().metadata_props.emplace_back(kBf16NodesMetadataKey, "conv_a");
  Tensor from_metadata = RunGraph(*graph, {}).front().second;
  EXPECT_EQ(RelativeL2(direct, from_metadata), 0.0);
  EXPECT_GT(RelativeL2(ref, from_metadata), 0.0);
  EXPECT_LT(RelativeL2(ref, from_metadata), 1e-2);
  // An unknown name changes nothing.
  auto other = TwoConvs();
  other->info().metadata_props.emplace_back(kBf16NodesMetadataKey, "no_such_node");
  EXPECT_EQ(RelativeL2(ref, RunGraph(*other, {}).front().second), 0.0);
}

}  // namespace
}  // namespace qtune::runtime
