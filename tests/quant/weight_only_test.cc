// Weight-only low-bit quantization end to end on a batch-1 MatMul stack (ir/matmul_stack.h):
// the int4 / int4_awq / int8_weight_only presets, the export run in qtune and in ONNX
// Runtime against the dequantized-weight math, the int4 file size, --target ort's
// MatMulNBits against the QDQ export, and the bad-input cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/float_convert.h"
#include "core/npy.h"
#include "export_test_util.h"
#include "ir/matmul_stack.h"
#include "ir/onnx_io.h"
#include "quant/quantize_model.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::quant {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  return (fs::temp_directory_path() / ("qtune_wo_" + std::to_string(getpid()) + "_" + name))
      .string();
}

std::unique_ptr<ir::Graph> Stack(int64_t width, int64_t layers = 2, int64_t batch = 1) {
  return ir::BuildMatMulStack({.seed = 3, .layers = layers, .width = width, .batch = batch});
}

Tensor RandomRows(int64_t rows, int64_t width, uint32_t seed, float salient = 1.0f) {
  Tensor t = Tensor::Allocate(DataType::kFloat32, {rows, width}).value();
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int64_t i = 0; i < rows * width; ++i) {
    t.data<float>()[i] = d(rng) * (i % width < 4 ? salient : 1.0f);
  }
  return t;
}

StatusOr<QuantizeModelResult> Quantize(const ir::Graph& g, const std::string& recipe,
                                       std::optional<Target> target = std::nullopt,
                                       const std::string& calib = "") {
  QuantizeModelOptions options;
  options.recipe = recipe;
  options.target = target;
  options.show_progress = false;
  if (calib.empty()) {
    options.random_calibration = true;
    options.random_samples = 8;
  } else {
    options.calib_specs = {calib};
  }
  return QuantizeModel(g, options);
}

// The float graph with every low-bit weight replaced by what its DequantizeLinear computes
// (codes, scales and zero points read back from the exported graph).
std::unique_ptr<ir::Graph> DequantizedWeights(const ir::Graph& float_graph,
                                              const ir::Graph& exported) {
  auto out = float_graph.Clone();
  for (const ir::Node* dq : exported.nodes()) {
    if (dq->op_type() != "DequantizeLinear") continue;
    auto name = FloatNameOfDequantized(dq->output(0)->name());
    if (!name) continue;
    const Tensor& codes = dq->input(0)->initializer();
    const Tensor& scale = dq->input(1)->initializer();
    const Tensor* zp =
        dq->num_inputs() > 2 && dq->input(2) ? &dq->input(2)->initializer() : nullptr;
    const int64_t block = dq->GetInt("block_size", 0), axis = dq->GetInt("axis", 1);
    const int64_t rows = codes.size(0), cols = codes.size(1);
    Tensor w = Tensor::Allocate(DataType::kFloat32, {rows, cols}).value();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        int64_t s = 0;
        if (block > 0) {
          s = axis == 0 ? (r / block) * cols + c : r * (cols / block) + c / block;
        } else {
          s = axis == 0 ? r : c;
        }
        const bool is_unsigned =
            codes.dtype() == DataType::kUint4 || codes.dtype() == DataType::kUint8;
        const int q = is_unsigned ? static_cast<const uint8_t*>(codes.raw_data())[r * cols + c]
                                  : static_cast<const int8_t*>(codes.raw_data())[r * cols + c];
        const int z = zp == nullptr ? 0
                      : is_unsigned ? static_cast<const uint8_t*>(zp->raw_data())[s]
                                    : static_cast<const int8_t*>(zp->raw_data())[s];
        const float sc = scale.dtype() == DataType::kFloat16
                             ? HalfToFloat(scale.data<uint16_t>()[s])
                             : scale.data<float>()[s];
        w.data<float>()[r * cols + c] = static_cast<float>(q - z) * sc;
      }
    }
    EXPECT_TRUE(out->SetInitializer(out->FindValue(*name), std::move(w)).ok());
  }
  return out;
}

int64_t SavedBytes(const ir::Graph& g, const std::string& name) {
  const std::string path = TempPath(name);
  EXPECT_TRUE(ir::SaveModel(g, path).ok());
  const int64_t bytes = static_cast<int64_t>(fs::file_size(path));
  fs::remove(path);
  return bytes;
}

TEST(WeightOnlyTest, Int4StackRunsInQtuneAndOrtLikeTheDequantizedWeights) {
  auto stack = Stack(512);
  auto result = Quantize(*stack, "int4");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  int weights = 0;
  for (const QuantSite& s : result->plan.sites) {
    EXPECT_EQ(s.kind, QuantSite::Kind::kWeight) << s.value;
    EXPECT_TRUE(s.weight_only);
    EXPECT_EQ(s.config.block_size, 64);
    EXPECT_EQ(s.config.axis, 0);  // K of MatMul's B [K, N]
    weights += s.enabled;
  }
  EXPECT_EQ(weights, 2);
  EXPECT_TRUE(result->plan.skipped.empty());
  const ir::Graph& q = *result->quantized;
  EXPECT_EQ(testing::CountOps(q, "DequantizeLinear"), 2);
  EXPECT_EQ(q.onnx_opset(), 21);
  for (const ir::Node* n : q.nodes()) {
    if (n->op_type() != "DequantizeLinear") continue;
    EXPECT_EQ(n->GetInt("block_size", 0), 64);
    EXPECT_EQ(n->input(0)->initializer().dtype(), DataType::kInt4);
    EXPECT_EQ(n->input(1)->initializer().dtype(), DataType::kFloat32);
    EXPECT_EQ(n->input(1)->initializer().sizes(), (std::vector<int64_t>{8, 512}));
  }
  for (const ExportedSite& s : result->export_report.sites) {
    EXPECT_DOUBLE_EQ(s.effective_bits, 4.5);  // 4 + 32 / 64
  }

  EXPECT_EQ(testing::CountOps(q, "Cast"), 0);  // fp32 scales: DQ -> MatMul directly
  // Size: INT4 two per byte plus fp32 scales.
  const int64_t fp32_bytes = SavedBytes(*stack, "fp32.onnx");
  const int64_t int4_bytes = SavedBytes(q, "int4.onnx");
  EXPECT_LE(int4_bytes, fp32_bytes / 5) << int4_bytes << " vs " << fp32_bytes;

  Tensor x = RandomRows(1, 512, 11);
  auto expected = testing::RunQtune(*DequantizedWeights(*result->float_graph, q), "x", x);
  auto ours = testing::RunQtune(q, "x", x);
  auto fp32 = testing::RunQtune(*stack, "x", x);
  ASSERT_TRUE(expected.ok() && ours.ok() && fp32.ok()) << ours.status().ToString();
  // qtune's low-bit GEMV (and ORT's MatMulNBits) may quantize the activation row to int8
  // per block (ORT accuracy level 4): agreement within a few 1e-3, not bit for bit.
  EXPECT_LE(qtune::testing::RelativeL2(*ours, *expected), 5e-3)
      << "max abs " << qtune::testing::MaxAbsDiff(*ours, *expected);
  EXPECT_GT(qtune::testing::MaxAbsDiff(*ours, *fp32), 0.0) << "export changed nothing";
  EXPECT_LE(qtune::testing::RelativeL2(*ours, *fp32), 0.15);
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  auto ort = testing::RunOrtOn(q, "int4", "x", x);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  EXPECT_LE(qtune::testing::RelativeL2(*ort, *ours), 5e-3);
  EXPECT_LE(qtune::testing::RelativeL2(*ort, *expected), 5e-3);
}

TEST(WeightOnlyTest, Int8WeightOnlyQuantizesGemvLayers) {
  auto stack = Stack(256);
  auto int8 = Quantize(*stack, "int8");
  ASSERT_TRUE(int8.ok()) << int8.status().ToString();
  ASSERT_FALSE(int8->plan.skipped.empty());
  EXPECT_EQ(int8->plan.skipped[0].reason, "GEMV shape (M = 1)");

  auto result = Quantize(*stack, "int8_weight_only");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->plan.skipped.empty());
  const ir::Graph& q = *result->quantized;
  EXPECT_EQ(testing::CountOps(q, "DequantizeLinear"), 2);
  EXPECT_EQ(testing::CountOps(q, "QuantizeLinear"), 0);
  Tensor x = RandomRows(1, 256, 5);
  auto ours = testing::RunQtune(q, "x", x);
  auto fp32 = testing::RunQtune(*stack, "x", x);
  ASSERT_TRUE(ours.ok() && fp32.ok()) << ours.status().ToString();
  EXPECT_LE(qtune::testing::RelativeL2(*ours, *fp32), 0.01);
  EXPECT_LE(SavedBytes(q, "int8wo.onnx"), SavedBytes(*stack, "fp32b.onnx") * 3 / 10);
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  auto ort = testing::RunOrtOn(q, "int8wo", "x", x);
  ASSERT_TRUE(ort.ok()) << ort.status().ToString();
  EXPECT_LE(qtune::testing::RelativeL2(*ort, *ours), 1e-2);
}

// --target ort writes MatMulNBits; ONNX Runtime's output on it matches its output on the
// QDQ export of the same weights (symmetric, and with packed zero points).
void CheckMatMulNBits(const std::string& recipe) {
  auto stack = Stack(256);
  auto qdq = Quantize(*stack, recipe);
  auto nbits = Quantize(*stack, recipe, Target::kOrt);
  ASSERT_TRUE(qdq.ok()) << qdq.status().ToString();
  ASSERT_TRUE(nbits.ok()) << nbits.status().ToString();
  const ir::Graph& g = *nbits->quantized;
  EXPECT_EQ(testing::CountOps(g, "MatMulNBits"), 2);
  EXPECT_EQ(testing::CountOps(g, "MatMul"), 0);
  EXPECT_EQ(g.info().opset_imports.at("com.microsoft"), 1);
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  Tensor x = RandomRows(1, 256, 9);
  auto a = testing::RunOrtOn(g, "nbits", "x", x);
  auto b = testing::RunOrtOn(*qdq->quantized, "nbits_qdq", "x", x);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  // ORT turns the QDQ form into MatMulNBits at accuracy level 4 (the activation row
  // quantized to int8 per block); the op written directly keeps float activations.
  EXPECT_LE(qtune::testing::RelativeL2(*a, *b), 1e-2);
  // And qtune on the QDQ export agrees with ORT's MatMulNBits.
  auto ours = testing::RunQtune(*qdq->quantized, "x", x);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_LE(qtune::testing::RelativeL2(*ours, *a), 5e-3);
}

TEST(WeightOnlyTest, MatMulNBitsMatchesTheQdqExportInOrt) { CheckMatMulNBits("int4"); }

// Also fp16 scales: the QDQ export's DequantizeLinear is followed by a Cast to float32.
TEST(WeightOnlyTest, MatMulNBitsWithZeroPointsMatchesTheQdqExportInOrt) {
  const std::string path = TempPath("asym.yaml");
  std::ofstream(path) << "imports: {base: int4}\nquantizers:\n  - $import: base\n"
                         "  - name: \"*weight_quantizer\"\n    op: MatMul\n    symmetric: false\n"
                         "    block_size: 32\n    scale_type: fp16\n";
  CheckMatMulNBits(path);
  fs::remove(path);
}

TEST(WeightOnlyTest, AwqAndClipBeatRtnWhenInputChannelsAreSalient) {
  auto stack = Stack(256, 1, 0);  // batch "N": 16 rows at once below
  const std::string calib = TempPath("calib.npy");
  ASSERT_TRUE(WriteNpy(calib, RandomRows(64, 256, 21, 30.0f)).ok());
  Tensor x = RandomRows(16, 256, 22, 30.0f);
  auto fp32 = testing::RunQtune(*stack, "x", x);
  ASSERT_TRUE(fp32.ok());
  std::map<std::string, double> error;
  for (const std::string recipe : {"int4", "int4_awq"}) {
    auto result = Quantize(*stack, recipe, std::nullopt, calib);
    ASSERT_TRUE(result.ok()) << recipe << ": " << result.status().ToString();
    auto out = testing::RunQtune(*result->quantized, "x", x);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    error[recipe] = qtune::testing::RelativeL2(*out, *fp32);
    if (recipe == "int4_awq") {
      EXPECT_EQ(testing::CountOps(*result->quantized, "Mul"), 1);  // x * (1 / s)
      EXPECT_EQ(result->plan.sites[0].input_scale.size(), 256u);
      if (qtune::testing::OrtAvailable()) {
        auto ort = testing::RunOrtOn(*result->quantized, "awq", "x", x);
        ASSERT_TRUE(ort.ok()) << ort.status().ToString();
        // Salient channels (30x) make ORT's int8 activation blocks coarser: 1e-2.
        EXPECT_LE(qtune::testing::RelativeL2(*ort, *out), 1e-2);
      }
    }
  }
  fs::remove(calib);
  EXPECT_LT(error["int4_awq"], error["int4"]) << error["int4_awq"] << " vs " << error["int4"];
}

TEST(WeightOnlyTest, BlocksThatDoNotFitKLeaveTheLayerFloatOrFailWhenForced) {
  auto stack = Stack(48);  // K = 48 < 64
  auto result = Quantize(*stack, "int4");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->plan.skipped.size(), 2u);
  EXPECT_EQ(result->plan.skipped[0].reason, "K = 48 < int4 block_size 64 (one block)");

  std::string matmul;
  for (const ir::Node* n : stack->nodes()) {
    if (n->op_type() == "MatMul" && matmul.empty()) matmul = n->name();
  }
  const std::string path = TempPath("forced.yaml");
  std::ofstream(path) << "imports: {base: int4}\nquantizers:\n  - $import: base\n"
                         "  - name: \""
                      << matmul << "/weight_quantizer\"\n    block_size: 32\n";
  auto forced = Quantize(*Stack(48), path);
  fs::remove(path);
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.status().message().find("K = 48 is not a multiple of int4 block_size 32"),
            std::string::npos)
      << forced.status().ToString();
}

TEST(WeightOnlyTest, Int4OnActivationsIsAnError) {
  const std::string path = TempPath("act.yaml");
  std::ofstream(path) << "quantizers:\n  - name: \"*\"\n    format: int4\n";
  auto result = Quantize(*Stack(64, 2, 4), path);  // batch 4: not a GEMV
  fs::remove(path);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("weight-only format"), std::string::npos)
      << result.status().ToString();
}

}  // namespace
}  // namespace qtune::quant
