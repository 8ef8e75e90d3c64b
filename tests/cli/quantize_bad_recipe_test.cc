// `qtune quantize` (and autotune, tune) on bad low-bit input (issue 27, docs/cli.md "How bad input
// is answered"): a YAML recipe that asks for something invalid, or that the model or target cannot
// take, is a usage error (exit 2) found before calibrating; a recipe file that is missing or not
// YAML, and a model that is already quantized (QDQ, int4, NVFP4, MXFP8, MatMulNBits), are
// bad input (exit 3).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.h"

namespace qtune {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::RunQtuneCli;

std::string M(const std::string& f) { return std::string(QTUNE_MODELS_DIR) + "/fmnist/" + f; }

class QuantizeBadRecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qtune_badrecipe_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string Out() const { return (dir_ / "out.onnx").string(); }

  // quantize with real calibration data: a check that came after calibration would print
  // the "calibrating" progress line and take seconds.
  CliResult Quantize(const std::string& model, const std::string& recipe,
                     const std::string& extra = "") {
    return RunQtuneCli("quantize " + model + " -o " + Out() + " --calib " + M("calib_512.npy") +
                       " --recipe " + recipe + extra);
  }

  void ExpectBeforeCalibration(const CliResult& r, int code, const std::string& what) {
    EXPECT_EQ(r.exit_code, code) << r.out;
    EXPECT_EQ(r.out.rfind("qtune: error: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(what), std::string::npos) << "expected '" << what << "' in " << r.out;
    EXPECT_EQ(r.out.find("calibrating"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(Out())) << r.out;
  }

  fs::path dir_;
};

TEST_F(QuantizeBadRecipeTest, YamlRecipeAskingForSomethingInvalidIsAUsageError) {
  struct Case {
    std::string text, what;
  } cases[] = {
      {"quantizers:\n  - name: \"*weight_quantizer\"\n    format: int5\n",
       "r.yaml:3:5: key 'quantizers[0].format': 'int5' is not valid"},
      {"imports: {base: int4}\nquantizers:\n  - $import: base\n  - name: \"*\"\n"
       "    algorithm: gptq\n",
       "r.yaml:5:5: key 'quantizers[1].algorithm': 'gptq' is not valid"},
      {"quantizers:\n  - name: \"*weight_quantizer\"\n    scale_type: bf16\n",
       "r.yaml:3:5: key 'quantizers[0].scale_type'"},
      {"quantizers:\n  - name: \"*weight_quantizer\"\n    format: int4\n    block_size: 48\n",
       "r.yaml:4:5: key 'quantizers[0].block_size': block_size 48 is not a power of two"},
      {"quantizers:\n  - name: \"*weight_quantizer\"\n    format: mxfp8\n    block_size: 64\n",
       "r.yaml:2:5: key 'quantizers[0]': mxfp8 has blocks of exactly 32"},
      {"imports: {base: int8}\n$import: base\nbogus: 1\n", "r.yaml:3:1: key 'bogus': unknown key"},
      {"imports: {base: int8}\n$import: base\naccuracy_fallback: {min_sqnr_db: 40, "
       "max_float_fraction: 2}\n",
       "key 'accuracy_fallback.max_float_fraction': max_float_fraction must be in [0, 1]"},
      {"$import: nothing\n", "r.yaml:1:10: key '$import': $import of unknown alias 'nothing'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ExpectBeforeCalibration(Quantize(M("fmnist_resnet.onnx"), Write("r.yaml", c.text)), 2, c.what);
  }
}

TEST_F(QuantizeBadRecipeTest, RecipeFileMissingOrNotYamlIsBadInput) {
  struct Case {
    std::string text, what;  // text "" with no file: missing
  } cases[] = {
      {"quantizers: [\n", "r.yaml:2:1: YAML syntax error"},
      {"", "r.yaml: the recipe is empty"},
      {"- name: x\n", "a recipe must be a YAML mapping"},
      {"imports: {base: no_such_file.yaml}\n$import: base\n",
       "cannot read imported file '" + (dir_ / "no_such_file.yaml").string() + "'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ExpectBeforeCalibration(Quantize(M("fmnist_resnet.onnx"), Write("r.yaml", c.text)), 3, c.what);
  }
  ExpectBeforeCalibration(Quantize(M("fmnist_resnet.onnx"), (dir_ / "missing.yaml").string()), 3,
                          "is neither a preset");
}

// autotune and tune take --recipe as quantize does, checked before anything else runs.
TEST_F(QuantizeBadRecipeTest, AutotuneAndTuneAnswerABadRecipeLikeQuantize) {
  const std::string bad = Write("bad.yaml", "quantizers:\n  - format: int5\n");
  const std::string not_yaml = Write("notyaml.yaml", "quantizers: [\n");
  const std::string common = M("fmnist_resnet.onnx") + " --calib " + M("calib_512.npy");
  for (const auto& [recipe, code] : {std::pair{bad, 2}, std::pair{not_yaml, 3}}) {
    SCOPED_TRACE(recipe);
    CliResult a = RunQtuneCli("autotune " + common + " -o " + Out() + " --work-dir " +
                              (dir_ / "wd").string() + " --mode quick --recipe " + recipe);
    ExpectBeforeCalibration(a, code, recipe + ":");
    CliResult t =
        RunQtuneCli("tune " + common + " -o " + (dir_ / "t.qtc").string() + " --recipe " + recipe);
    ExpectBeforeCalibration(t, code, recipe + ":");
    EXPECT_FALSE(fs::exists(dir_ / "t.qtc"));
  }
}

// Valid recipes that this model or target cannot take: found after loading the model,
// before calibrating.
TEST_F(QuantizeBadRecipeTest, LowBitRecipeTheModelOrTargetCannotTakeIsAUsageError) {
  // int4 on activation quantizers (the Convs' inputs).
  ExpectBeforeCalibration(
      Quantize(M("fmnist_resnet.onnx"),
               Write("act.yaml",
                     "imports: {base: int8}\n$import: base\nquantizers:\n  - $import: base\n"
                     "  - name: \"*input_quantizer\"\n    format: int4\n")),
      2,
      "quantizer '/stem/stem.0/Conv/input_quantizer' (recipe rule " + (dir_ / "act.yaml").string() +
          ":5) is an activation quantizer, but int4 is a weight-only format");
  // Block scales on activations.
  ExpectBeforeCalibration(
      Quantize(M("fmnist_resnet.onnx"),
               Write("actblock.yaml",
                     "imports: {base: int8}\n$import: base\nquantizers:\n  - $import: base\n"
                     "  - name: \"*input_quantizer\"\n    block_size: 32\n")),
      2, "block_size applies to weights only");
  // One rule's mxfp8 and another rule's block size: MX blocks are 32 wide (the first
  // MatMul/Gemm/Conv weight the preset quantizes is named).
  ExpectBeforeCalibration(
      Quantize(M("fmnist_resnet.onnx"),
               Write("mx64.yaml",
                     "imports: {base: mxfp8}\nquantizers:\n  - $import: base\n"
                     "  - name: \"*weight_quantizer\"\n    block_size: 64\n")),
      2,
      "_quantizer' (recipe rule " + (dir_ / "mx64.yaml").string() +
          ":4) is mxfp8, whose blocks have exactly 32 elements, but a rule gives it block_size "
          "64");
  // A block that does not divide K (the head's K is 64) in a rule naming the quantizer.
  ExpectBeforeCalibration(
      Quantize(M("fmnist_resnet.onnx"),
               Write("k.yaml",
                     "imports: {base: int4}\nquantizers:\n  - $import: base\n"
                     "  - name: \"/fc/Gemm/weight_quantizer\"\n    block_size: 128\n")),
      2, "K = 64 < int4 block_size 128");
  // int4 with zero points and --target trt.
  ExpectBeforeCalibration(
      Quantize(M("fmnist_resnet.onnx"),
               Write("asym.yaml",
                     "imports: {base: int4}\nquantizers:\n  - $import: base\n"
                     "  - name: \"*weight_quantizer\"\n    op: Gemm\n    symmetric: false\n"),
               " --target trt"),
      2, "--target trt takes symmetric block weights only");
}

// A model quantized by qtune (or written as MatMulNBits) given back to quantize.
TEST_F(QuantizeBadRecipeTest, AlreadyQuantizedLowBitModelsAreRefused) {
  const std::string stack = (dir_ / "stack.onnx").string();
  const std::string nbits = (dir_ / "nbits.onnx").string();
  ASSERT_EQ(std::system((std::string(QTUNE_MAKE_MODEL) + " matmul_stack " + stack +
                         " --width 128 --layers 2 > /dev/null")
                            .c_str()),
            0);
  ASSERT_EQ(std::system((std::string(QTUNE_MAKE_MODEL) + " nbits_stack " + nbits +
                         " --width 128 --layers 2 > /dev/null")
                            .c_str()),
            0);
  struct Case {
    std::string recipe, target, found;
  } cases[] = {
      {"int4", "", "(2 DequantizeLinear nodes)"},
      {"nvfp4", "", "(4 DequantizeLinear nodes)"},
      {"mxfp8", "", "(2 DequantizeLinear nodes)"},
      {"int4", " --target ort", "(2 MatMulNBits nodes)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.recipe + c.target);
    const std::string exported = (dir_ / (c.recipe + ".onnx")).string();
    CliResult q = RunQtuneCli("quantize " + stack + " -o " + exported +
                              " --random-calibration --recipe " + c.recipe + c.target);
    ASSERT_EQ(q.exit_code, 0) << q.out;
    CliResult again = Quantize(exported, "int8");
    ExpectBeforeCalibration(again, 3, exported + " is already quantized " + c.found);
  }
  ExpectBeforeCalibration(Quantize(nbits, "int8"), 3,
                          nbits + " is already quantized (2 MatMulNBits nodes)");
}

}  // namespace
}  // namespace qtune
