// The kernel registry (runtime/kernels/kernel_registry.h): candidates ordered by
// priority, the opset and dtype filters, the reasons recorded for candidates passed over,
// and a real model compiling to the same kernels as the hard-coded factory list did.
#include "runtime/kernels/kernel_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "runtime/compile.h"

namespace qtune::runtime {
namespace {

class NamedKernel final : public Kernel {
 public:
  explicit NamedKernel(std::string name) : name_(std::move(name)) {}
  std::string Describe() const override { return name_; }
  Status Run(std::span<const Tensor>, std::span<Tensor>) override { return Status::Ok(); }

 private:
  std::string name_;
};

StatusOr<std::optional<KernelChoice>> Applies(const KernelRequest& request, const char* name) {
  KernelChoice choice;
  choice.kernel = std::make_unique<NamedKernel>(name);
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  choice.output_layouts.assign(request.node.num_outputs(), Layout::kPlain);
  return std::optional<KernelChoice>(std::move(choice));
}
StatusOr<std::optional<KernelChoice>> CreateA(const KernelRequest& r) { return Applies(r, "a"); }
StatusOr<std::optional<KernelChoice>> CreateB(const KernelRequest& r) { return Applies(r, "b"); }
StatusOr<std::optional<KernelChoice>> CreateFallback(const KernelRequest& r) {
  return Applies(r, "fallback");
}
StatusOr<std::optional<KernelChoice>> CreateTooSmall(const KernelRequest& r) {
  return NotApplicable(r, "the tensor is too small");
}
StatusOr<std::optional<KernelChoice>> CreateSilent(const KernelRequest&) { return NotApplicable(); }
StatusOr<std::optional<KernelChoice>> CreateInvalid(const KernelRequest& r) {
  return InvalidArgumentError(r.node.DebugName() + ": bad attribute");
}

KernelRegistration Reg(const char* name, int priority, KernelFactory factory) {
  return {.name = name, .priority = priority, .ops = {{"", "Relu"}}, .factory = factory};
}

std::vector<std::string> Names(const std::vector<const KernelRegistration*>& list) {
  std::vector<std::string> names;
  for (const KernelRegistration* r : list) names.push_back(r->name);
  return names;
}

// x (float32 [2,3]) -> Relu -> y, at `opset`.
std::unique_ptr<ir::Graph> ReluGraph(int64_t opset, DataType dtype = DataType::kFloat32) {
  ir::GraphBuilder b(opset);
  ir::Value* x = b.Input("x", dtype, {2, 3});
  b.Output(b.Op("Relu", {x}, {}, {.name = "relu", .output_names = {"y"}}));
  return b.Build();
}

struct Request {
  explicit Request(const ir::Graph& graph, DataType dtype = DataType::kFloat32)
      : node(*graph.FindNode("relu")) {
    x.dtype = y.dtype = dtype;
    x.sizes = y.sizes = {2, 3};
  }
  KernelRequest Make(int64_t opset) {
    return KernelRequest{node, opset, 1, {&x}, {&y}, {Layout::kPlain}};
  }
  const ir::Node& node;
  ValueInfo x, y;
};

TEST(KernelRegistry, CandidatesAreOrderedByPriorityThenRegistration) {
  KernelRegistry registry;
  registry.Register(Reg("low", 50, &CreateA));
  registry.Register(Reg("first_of_two", 100, &CreateA));
  registry.Register(Reg("high", 200, &CreateA));
  registry.Register(Reg("second_of_two", 100, &CreateA));
  EXPECT_EQ(Names(registry.Candidates("", "Relu")),
            (std::vector<std::string>{"high", "first_of_two", "second_of_two", "low"}));
  EXPECT_EQ(Names(registry.Candidates("ai.onnx", "Relu")), Names(registry.Candidates("", "Relu")))
      << "ai.onnx is the default domain";
  EXPECT_TRUE(registry.Candidates("qtune", "Relu").empty());
  EXPECT_TRUE(registry.Candidates("", "Sigmoid").empty());
}

TEST(KernelRegistry, OpsetOutsideTheRangeIsFilteredWithTheReason) {
  auto graph = ReluGraph(11);
  Request r(*graph);
  KernelRegistration reg = Reg("new_relu", 100, &CreateA);
  reg.opset_since = 13;
  reg.opset_until = 17;
  EXPECT_EQ(KernelRegistry::FilterReason(reg, r.Make(11)), "opset 11 outside its range 13-17");
  EXPECT_EQ(KernelRegistry::FilterReason(reg, r.Make(18)), "opset 18 outside its range 13-17");
  EXPECT_EQ(KernelRegistry::FilterReason(reg, r.Make(13)), "");
  EXPECT_EQ(KernelRegistry::FilterReason(reg, r.Make(17)), "");
}

TEST(KernelRegistry, InputDtypeNotAcceptedIsFilteredWithTheReason) {
  auto graph = ReluGraph(17, DataType::kInt8);
  Request r(*graph, DataType::kInt8);
  KernelRegistration reg = Reg("float_relu", 100, &CreateA);
  reg.input_dtypes = {DataType::kFloat32, DataType::kFloat16};
  EXPECT_EQ(KernelRegistry::FilterReason(reg, r.Make(17)),
            "input 0 is int8, it takes float32/float16");
  reg.input_dtypes = {DataType::kInt8};
  EXPECT_EQ(KernelRegistry::FilterReason(reg, r.Make(17)), "");
  reg.input_dtypes = {};  // any
  EXPECT_EQ(KernelRegistry::FilterReason(reg, r.Make(17)), "");
}

TEST(KernelRegistry, ChooseRecordsEveryCandidatePassedOver) {
  auto graph = ReluGraph(17);
  Request r(*graph);
  KernelRegistry registry;
  KernelRegistration old_opset = Reg("old_opset", 400, &CreateA);
  old_opset.opset_until = 12;
  registry.Register(std::move(old_opset));
  registry.Register(Reg("too_small", 300, &CreateTooSmall));
  registry.Register(Reg("silent", 250, &CreateSilent));
  registry.Register(Reg("b", 200, &CreateB));
  registry.Register(Reg("a", 100, &CreateA));
  registry.SetFallback(
      {.name = "fallback", .tier = KernelTier::kReference, .factory = &CreateFallback});
  auto selection = registry.Choose(r.Make(17), {});
  ASSERT_TRUE(selection.ok()) << selection.status().ToString();
  EXPECT_EQ(selection->kernel, "b");
  EXPECT_EQ(selection->choice.kernel->Describe(), "b");
  ASSERT_EQ(selection->passed_over.size(), 3u);
  EXPECT_EQ(selection->passed_over[0].kernel, "old_opset");
  EXPECT_EQ(selection->passed_over[0].reason, "opset 17 outside its range 1-12");
  EXPECT_EQ(selection->passed_over[1].kernel, "too_small");
  EXPECT_EQ(selection->passed_over[1].reason, "the tensor is too small");
  EXPECT_EQ(selection->passed_over[2].kernel, "silent");
  EXPECT_EQ(selection->passed_over[2].reason, "not applicable (no reason given)");
}

TEST(KernelRegistry, FallbackServesWhenFastTiersAreOff) {
  auto graph = ReluGraph(17);
  Request r(*graph);
  KernelRegistry registry;
  registry.Register(Reg("a", 100, &CreateA));
  registry.SetFallback(
      {.name = "fallback", .tier = KernelTier::kReference, .factory = &CreateFallback});
  auto selection =
      registry.Choose(r.Make(17), {.fast_tiers = false, .fast_tiers_off_reason = "off"});
  ASSERT_TRUE(selection.ok());
  EXPECT_EQ(selection->kernel, "fallback");
  EXPECT_EQ(selection->tier, KernelTier::kReference);
  ASSERT_EQ(selection->passed_over.size(), 1u);
  EXPECT_EQ(selection->passed_over[0].reason, "off");
}

TEST(KernelRegistry, FactoryErrorIsReturnedNotPassedOver) {
  auto graph = ReluGraph(17);
  Request r(*graph);
  KernelRegistry registry;
  registry.Register(Reg("invalid", 200, &CreateInvalid));
  registry.Register(Reg("a", 100, &CreateA));
  registry.SetFallback(
      {.name = "fallback", .tier = KernelTier::kReference, .factory = &CreateFallback});
  auto selection = registry.Choose(r.Make(17), {});
  ASSERT_FALSE(selection.ok());
  EXPECT_NE(selection.status().ToString().find("bad attribute"), std::string::npos);
}

TEST(KernelRegistry, CompileUsesTheGivenRegistryAndThePlanExplainsIt) {
  auto graph = ReluGraph(17);
  KernelRegistry registry;
  registry.Register(Reg("too_small", 300, &CreateTooSmall));
  registry.Register(Reg("a", 100, &CreateA));
  registry.SetFallback(
      {.name = "fallback", .tier = KernelTier::kReference, .factory = &CreateFallback});
  CompileOptions options;
  options.registry = &registry;
  auto plan = Compile(*graph, {{"x", {2, 3}}}, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ((*plan)->steps.size(), 1u);
  EXPECT_EQ((*plan)->steps[0].kernel->Describe(), "a");
  const std::string plain = (*plan)->ToString();
  EXPECT_EQ(plain.find("passed over"), std::string::npos) << "the default print is unchanged";
  const std::string why = (*plan)->ToString({.explain_kernels = true});
  EXPECT_EQ(why.find("precision"), std::string::npos) << "fp32 is not repeated on every step";
  EXPECT_NE(why.find("passed over too_small: the tensor is too small"), std::string::npos) << why;
}

TEST(KernelRegistry, BuiltinRegistryServesEveryFastTierOp) {
  const KernelRegistry& registry = KernelRegistry::Builtin();
  EXPECT_EQ(Names(registry.Candidates("", "ConvTranspose")),
            (std::vector<std::string>{"onednn_upsample_deconv", "onednn_deconv"}));
  EXPECT_EQ(Names(registry.Candidates("", "MatMul")),
            (std::vector<std::string>{"native_gemv", "onednn_matmul", "onednn_batch_matmul"}));
  const std::vector<std::string> convolutions = {"onednn_conv1d_matmul", "native_depthwise_conv1d",
                                                 "onednn_winograd_conv", "onednn_conv"};
  EXPECT_EQ(Names(registry.Candidates("", "Conv")), convolutions);
  EXPECT_EQ(Names(registry.Candidates("qtune", "FusedConv")), convolutions);
  for (const char* op : {"Conv",
                         "Gemm",
                         "MaxPool",
                         "Relu",
                         "Clip",
                         "Resize",
                         "Concat",
                         "Softmax",
                         "LayerNormalization",
                         "Gelu",
                         "Transpose",
                         "Split",
                         "ReduceMean",
                         "Log",
                         "Pow",
                         "Slice",
                         "Pad",
                         "QuantizeLinear",
                         "DequantizeLinear",
                         "BatchNormalization",
                         "LSTM",
                         "GRU",
                         "RNN"}) {
    EXPECT_FALSE(registry.Candidates("", op).empty()) << op;
  }
  for (const char* op : {"QConv", "QConvTranspose", "QMatMul", "QAdd", "QLookup", "MatMulBias"}) {
    EXPECT_FALSE(registry.Candidates("qtune", op).empty()) << op;
  }
}

// The fmnist model compiles to the kernels the hard-coded factory list chose before the
// registry (`qtune run models/fmnist/fmnist_resnet.onnx --print-plan --shape
// input=4x1x28x28` at commit 05f8ed3, on an AVX-512 machine).
TEST(KernelRegistry, FmnistCompilesToTheSameKernelsAsBeforeTheRegistry) {
  auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto plan = Compile(**graph, {{"input", {4, 1, 28, 28}}}, CompileOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const std::vector<std::pair<std::string, std::string>> before = {
      {"/stem/stem.0/Conv_fused", "onednn:brgconv:avx512_core"},
      {"/l1/c1/Conv_fused", "onednn:brgconv:avx512_core"},
      {"/l1/c2/Conv_fused", "onednn:brgconv:avx512_core"},
      {"/l2/sc/sc.0/Conv", "onednn:brgconv_1x1:avx512_core"},
      {"/l2/c1/Conv_fused", "onednn:brgconv:avx512_core"},
      {"/l2/c2/Conv_fused", "onednn:brgconv:avx512_core"},
      {"/l3/sc/sc.0/Conv", "onednn:brgconv_1x1:avx512_core"},
      {"/l3/c1/Conv_fused", "onednn:brgconv:avx512_core"},
      {"/l3/c2/Conv_fused", "onednn:brgconv:avx512_core"},
      {"/GlobalAveragePool", "onednn:jit:avx512_core"},
      // 4 rows: a matrix-vector product since the native GEMV kernel (issue 26).
      {"/fc/Gemm", "native:gemv:avx512"},
  };
  const auto& steps = (*plan)->steps;
  ASSERT_EQ(steps.size(), before.size()) << (*plan)->ToString();
  // Implementation names carry the CPU's ISA; elsewhere compare the tier ("onednn").
  const bool same_isa = steps[0].kernel->Describe().find("avx512_core") != std::string::npos;
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].node_name, before[i].first);
    const std::string got = steps[i].kernel->Describe();
    if (same_isa) {
      EXPECT_EQ(got, before[i].second) << steps[i].node_name;
    } else {
      EXPECT_EQ(got.substr(0, got.find(':')),
                before[i].second.substr(0, before[i].second.find(':')))
          << steps[i].node_name;
    }
    EXPECT_EQ(steps[i].precision, Precision::kFloat32);
  }
}

// Per-node bf16 is a typed property: the fused node made from a bf16 node is bf16 however
// it is named, and a node whose name merely starts alike is not.
TEST(KernelRegistry, Bf16NodePrecisionFollowsItsFusedNode) {
  auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  CompileOptions options;
  options.bf16_nodes = {"/l1/c1/Conv", "/fc/Gemm"};
  auto plan = Compile(**graph, {{"input", {4, 1, 28, 28}}}, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (const PlanStep& step : (*plan)->steps) {
    const bool want = step.node_name == "/l1/c1/Conv_fused" || step.node_name == "/fc/Gemm";
    EXPECT_EQ(step.precision, want ? Precision::kBfloat16 : Precision::kFloat32)
        << step.node_name << " " << step.kernel->Describe();
  }
  EXPECT_NE((*plan)->ToString({.explain_kernels = true}).find("precision bf16"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime
