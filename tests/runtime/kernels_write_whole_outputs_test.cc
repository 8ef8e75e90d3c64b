// Every kernel writes the whole of each output (issue 26 item 5). Session::Run hands the
// plan output buffers that are not zero-filled (Tensor::AllocateUninitialized), so a
// kernel that left part of an output alone would return stale memory.
//
// The proof, per kernel: real models are compiled and run step by step, twice; right
// before each step its outputs are filled with a byte pattern (0xA5 the first time, 0x5A
// the second). A byte that holds the pattern after the step both times was never written
// (a computed byte is the same in both runs, so it cannot equal both patterns). A step
// whose output shares memory with one of its inputs (in place, a sum post-op writing into
// the residual) is not filled, since that would change its input. Then every kernel the
// registry knows must have been run here or be listed with its kernel test, whose harness
// (kernel_test_util.h) fills outputs with NaN and frames them with sentinels.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/matmul_stack.h"
#include "ir/onnx_io.h"
#include "passes/pipeline.h"
#include "runtime/compile.h"
#include "runtime/frontend_test_models.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/plan/plan_executor.h"
#include "runtime/reference/registry.h"
#include "util/qdq_model.h"
#include "util/random_tensor.h"

namespace qtune::runtime {
namespace {

using Sizes = std::map<std::string, std::vector<int64_t>>;

// Kernels no model below runs, with the harness test that checks their outputs.
const std::map<std::string, std::string> kCheckedByTheirKernelTest = {
    {"native_batch_norm", "native_batchnorm_test"},
    {"native_depthwise_conv1d", "native_depthwise_conv1d_test"},
    {"native_copy_runs", "native_data_movement_test"},
    {"onednn_layer_norm", "layer_norm_kernels_test"},  // the LayerNorm of CPUs without AVX-512
    {"onednn_attention", "attention_kernels_test"},    // the Attention of CPUs without AVX-512
    {"native_split", "native_data_movement_test"},
    {"native_reduce", "native_data_movement_test"},
    {"native_unary", "native_unary_test"},
    {"native_gemv", "native_gemv_test"},
    {"native_lowbit_gemv", "lowbit_matmul_test"},
    {"native_quantize", "quant_elementwise_test"},
    {"native_dequantize", "quant_elementwise_test"},
    {"native_qadd", "quant_elementwise_test"},
    {"onednn_conv", "onednn_conv_test"},
    {"onednn_deconv", "onednn_deconv_test"},
    {"onednn_eltwise", "onednn_elementwise_test"},
    {"onednn_concat", "onednn_resize_concat_test"},
    {"onednn_resize", "onednn_resize_concat_test"},
    {"onednn_pool", "onednn_pool_test"},
    {"onednn_transpose", "onednn_int8_passthrough_test"},
    {"onednn_matmul", "onednn_matmul_test"},
    {"onednn_rnn", "onednn_rnn_test"},
    {"onednn_winograd_conv", "onednn_winograd_conv_test"},
    // Its test fills the output with 0xA5 and compares it with the reference.
    {"onednn_qdeconv", "onednn_qdeconv_test"},
};

// x [B,T,D] -> MatMul(x, Transpose(x)) (both operands computed) -> Gelu (opset 20).
std::unique_ptr<ir::Graph> BuildScoresGelu() {
  ir::GraphBuilder b(20);
  ir::Value* x = b.Input("x", DataType::kFloat32, {2, 5, 8});
  ir::Value* xt = b.Op("Transpose", {x}, {ir::Attribute::Ints("perm", {0, 2, 1})});
  b.Output(b.Op("Gelu", {b.Op("MatMul", {x, xt})}));
  return b.Build();
}

std::unique_ptr<ir::Graph> Cleaned(const ir::Graph& model) {
  std::unique_ptr<ir::Graph> graph = model.Clone();
  passes::PassOptions options;
  options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs, int64_t opset) {
    return EvaluateNode(node, inputs, opset);
  };
  auto report = passes::RunPipeline(*graph, options);
  QTUNE_CHECK(report.ok());
  return graph;
}

bool Overlaps(const Tensor& a, const Tensor& b) {
  if (!a.is_valid() || !b.is_valid() || a.byte_size() == 0 || b.byte_size() == 0) return false;
  const auto* a0 = static_cast<const std::byte*>(a.raw_data());
  const auto* b0 = static_cast<const std::byte*>(b.raw_data());
  return a0 < b0 + b.byte_size() && b0 < a0 + a.byte_size();
}

// Runs `model` step by step as described above; adds the registrations it ran to `ran`.
void CheckModel(const std::string& name, const ir::Graph& model, const Sizes& sizes,
                std::set<std::string>& ran) {
  SCOPED_TRACE(name);
  auto plan = Compile(model, sizes, CompileOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto executor = PlanExecutor::Create(std::move(*plan));
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  const Plan& p = (*executor)->plan();
  std::vector<Tensor> inputs, outputs;
  uint32_t seed = 1;
  for (int id : p.input_ids) {
    inputs.push_back(testing::RandomNormalTensor(p.values[id].sizes, seed++));
  }
  for (int id : p.output_ids) {
    auto t = Tensor::AllocateUninitialized(p.values[id].dtype, p.values[id].physical_sizes());
    ASSERT_TRUE(t.ok());
    outputs.push_back(std::move(*t));
  }
  auto binding = (*executor)->Bind(inputs, outputs);
  ASSERT_TRUE(binding.ok()) << binding.status().ToString();
  // Per step and output: the bytes that held the pattern after the first run.
  std::vector<std::vector<std::vector<bool>>> unwritten(p.steps.size());
  for (unsigned char pattern : {0xA5, 0x5A}) {
    const bool first = pattern == 0xA5;
    for (size_t s = 0; s < p.steps.size(); ++s) {
      const PlanStep& step = p.steps[s];
      std::vector<Tensor>& outs = binding->step_outputs[s];
      const std::vector<Tensor>& ins = binding->step_inputs[s];
      std::vector<bool> filled(outs.size(), false);
      for (size_t o = 0; o < outs.size(); ++o) {
        if (!outs[o].is_valid() || outs[o].byte_size() == 0) continue;
        bool shared = false;
        for (const Tensor& in : ins) shared |= Overlaps(outs[o], in);
        if (shared) continue;
        std::memset(outs[o].raw_data(), pattern, outs[o].byte_size());
        filled[o] = true;
      }
      Status status = step.kernel->Run(ins, outs);
      ASSERT_TRUE(status.ok()) << step.node_name << ": " << status.ToString();
      if (first) {
        ran.insert(step.registration);
        unwritten[s].resize(outs.size());
      }
      for (size_t o = 0; o < outs.size(); ++o) {
        if (!filled[o]) continue;
        const auto* bytes = static_cast<const unsigned char*>(outs[o].raw_data());
        std::vector<bool>& left = unwritten[s][o];
        if (first) left.assign(outs[o].byte_size(), false);
        int64_t never = 0;
        for (size_t i = 0; i < outs[o].byte_size(); ++i) {
          const bool untouched = bytes[i] == pattern;
          if (first) left[i] = untouched;
          if (!first && left[i] && untouched) ++never;
        }
        if (!first) {
          EXPECT_EQ(never, 0) << step.op_type << " '" << step.node_name << "' ("
                              << step.kernel->Describe() << ", " << step.registration
                              << "): output " << o << " has " << never << " of "
                              << outs[o].byte_size() << " bytes it never writes";
        }
      }
    }
  }
}

std::unique_ptr<ir::Graph> Load(const std::string& relative) {
  auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/" + relative);
  QTUNE_CHECK(graph.ok());
  return Cleaned(**graph);
}

TEST(KernelsWriteWholeOutputs, EveryKernelOfRealPlansWritesEveryByteOfItsOutputs) {
  std::set<std::string> ran;
  auto fmnist = Load("fmnist/fmnist_resnet.onnx");
  CheckModel("fmnist batch 1", *fmnist, {{"input", {1, 1, 28, 28}}}, ran);
  CheckModel("fmnist batch 5", *fmnist, {{"input", {5, 1, 28, 28}}}, ran);
  CheckModel("ppocr_cls", *Load("ppocr/ppocr_cls.onnx"), {{"x", {1, 3, 48, 192}}}, ran);
  auto det = Load("ppocr/ppocrv4_det.onnx");
  CheckModel("ppocrv4_det", *det, {{"x", {1, 3, 64, 64}}}, ran);
  auto stack = Cleaned(*ir::BuildMatMulStack({.layers = 2, .width = 80, .batch = 0}));
  CheckModel("matmul stack batch 1", *stack, {{"x", {1, 80}}}, ran);
  CheckModel("matmul stack batch 9", *stack, {{"x", {9, 80}}}, ran);
  auto vit = Cleaned(*testing::BuildVitBlock({.tokens = 9, .hidden = 32, .heads = 2, .mlp = 64}));
  CheckModel("vit block", *vit, {{"x", {2, 9, 32}}}, ran);
  CheckModel("scores + gelu", *Cleaned(*BuildScoresGelu()), {{"x", {2, 5, 8}}}, ran);
  auto audio = Cleaned(*testing::BuildAudioFrontEnd({.n_fft = 64, .hop = 16, .mels = 8}));
  CheckModel("audio front end", *audio, {{"audio", {1, 1, 800}}}, ran);
  // int8: the naive QDQ layouts of fmnist and the detector.
  for (bool unsigned_activations : {true, false}) {
    testing::QdqStyle style;
    style.unsigned_activations = unsigned_activations;
    auto qfm = testing::BuildNaiveQdq(
        *fmnist, {{"input", testing::RandomNormalTensor({5, 1, 28, 28}, 9)}}, style);
    ASSERT_TRUE(qfm.ok()) << qfm.status().ToString();
    CheckModel("fmnist int8", **qfm, {{"input", {5, 1, 28, 28}}}, ran);
  }
  testing::QdqStyle per_tensor;  // the detector is opset 11
  per_tensor.per_channel = false;
  auto qdet = testing::BuildNaiveQdq(*det, {{"x", testing::RandomNormalTensor({1, 3, 64, 64}, 9)}},
                                     per_tensor);
  ASSERT_TRUE(qdet.ok()) << qdet.status().ToString();
  CheckModel("ppocrv4_det int8", **qdet, {{"x", {1, 3, 64, 64}}}, ran);

  std::string ran_list;
  for (const std::string& r : ran) ran_list += " '" + r + "'";
  EXPECT_TRUE(ran.count("reference")) << "no step ran on the reference tier:" << ran_list;
  for (const KernelRegistration& r : KernelRegistry::Builtin().registrations()) {
    EXPECT_TRUE(ran.count(r.name) || kCheckedByTheirKernelTest.count(r.name))
        << "kernel '" << r.name << "': no model here runs it and no kernel test is listed "
        << "for it; add a model that does, or its harness test to kCheckedByTheirKernelTest. "
        << "Ran:" << ran_list;
  }
}

}  // namespace
}  // namespace qtune::runtime
