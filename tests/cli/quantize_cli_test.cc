// `qtune quantize` and `qtune eval` as a user runs them: exit codes, warnings, JSON.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace qtune {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::RunQtuneCli;

std::string M(const std::string& f) { return std::string(QTUNE_MODELS_DIR) + "/fmnist/" + f; }

std::string Temp(const std::string& name) {
  return (fs::temp_directory_path() / ("qtune_qcli_" + std::to_string(getpid()) + "_" + name))
      .string();
}

TEST(QuantizeCliTest, MissingCalibrationDataIsAUsageError) {
  CliResult r = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " -o " + Temp("a.onnx"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("qtune: error:", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("--calib"), std::string::npos) << r.out;
}

TEST(QuantizeCliTest, MissingOutputIsAUsageError) {
  CliResult r =
      RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " --calib " + M("calib_512.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

TEST(QuantizeCliTest, FlagContradictingTheRecipeIsAUsageError) {
  std::string recipe = Temp("trt.yaml");
  std::ofstream(recipe) << "imports: {base: int8}\n$import: base\ntarget: trt\n";
  CliResult r =
      RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " --report --random-calibration " +
                  "--recipe " + recipe + " --target cpu");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--target"), std::string::npos) << r.out;
  fs::remove(recipe);
}

// Low-bit recipes the model or target cannot take: usage errors before calibration.
TEST(QuantizeCliTest, LowBitRecipeTheModelCannotTakeIsAUsageError) {
  std::string forced = Temp("forced.yaml");  // the head's K is 64 < one block of 128
  std::ofstream(forced) << "imports: {base: int4}\nquantizers:\n  - $import: base\n"
                           "  - name: \"/fc/Gemm/weight_quantizer\"\n    block_size: 128\n";
  CliResult r = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") +
                            " --report --random-calibration --recipe " + forced);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("K = 64 < int4 block_size 128"), std::string::npos) << r.out;
  std::string asym = Temp("asym.yaml");
  std::ofstream(asym) << "imports: {base: int4}\nquantizers:\n  - $import: base\n"
                         "  - name: \"*weight_quantizer\"\n    op: Gemm\n    symmetric: false\n";
  r = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") +
                  " --report --random-calibration --target trt --recipe " + asym);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--target trt takes symmetric block weights only"), std::string::npos)
      << r.out;
  fs::remove(forced);
  fs::remove(asym);
}

TEST(QuantizeCliTest, RandomCalibrationWarnsLoudly) {
  CliResult r =
      RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " --report --random-calibration");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("WARNING"), std::string::npos);
  EXPECT_NE(r.out.find("MEANINGLESS"), std::string::npos);
}

TEST(QuantizeCliTest, ReportJsonListsLayersAndWritesNoModel) {
  std::string out = Temp("never.onnx");
  CliResult r = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " --report --json --calib " +
                                M("calib_512.npy") + " -o " + out,
                            /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["target"], "cpu");
  EXPECT_GE(j["quantized_layers"].get<int>(), 9);
  EXPECT_TRUE(j["output"].is_null());
  EXPECT_FALSE(fs::exists(out));
  for (const auto& layer : j["layers"]) {
    if (layer["quantized"].get<bool>() && layer["op"] == "Conv") {
      EXPECT_GT(layer["input_amax"].get<double>(), 0.0) << layer.dump();
      EXPECT_GT(layer["weight_amax"].get<double>(), 0.0) << layer.dump();
    }
  }
}

TEST(QuantizeCliTest, QuantizeThenEvalKeepsAccuracy) {
  std::string out = Temp("int8.onnx");
  CliResult q = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " -o " + out + " --calib " +
                            M("calib_512.npy"));
  ASSERT_EQ(q.exit_code, 0) << q.out;
  EXPECT_NE(q.out.find("wrote"), std::string::npos);
  CliResult e =
      RunQtuneCli("eval " + M("fmnist_resnet.onnx") + " " + out + " --data " + M("test_2000.npy") +
                      " --labels " + M("test_2000_labels.npy") + " --json --worst 5",
                  /*with_stderr=*/false);
  ASSERT_EQ(e.exit_code, 0) << e.out;
  nlohmann::json j = nlohmann::json::parse(e.out);
  EXPECT_EQ(j["samples"], 2000);
  EXPECT_GE(j["top1_agreement"].get<double>(), 0.98);
  EXPECT_LE(std::abs(j["accuracy_quantized"].get<double>() - j["accuracy_fp32"].get<double>()),
            0.002);
  EXPECT_GT(j["outputs"][0]["sqnr_db"].get<double>(), 25.0);
  ASSERT_EQ(j["worst_layers"].size(), 5u);
  double first = j["worst_layers"][0]["sqnr_db"].get<double>();
  EXPECT_GT(first, 10.0);
  EXPECT_LE(first, j["worst_layers"][4]["sqnr_db"].get<double>());
  CliResult bad = RunQtuneCli("eval " + M("fmnist_resnet.onnx") + " " + out + " --data " +
                              M("test_2000.npy") + " --labels " + M("calib_512.npy"));
  EXPECT_EQ(bad.exit_code, 3) << bad.out;
  fs::remove(out);
}

// The detector (weights in Constant nodes, BN folded by quantize) on an image folder:
// eval reads the folder like quantize does, and compares activations only.
TEST(QuantizeCliTest, EvalOnAnImageFolderComparesActivationsNotWeights) {
  const std::string det = std::string(QTUNE_MODELS_DIR) + "/ppocr/ppocrv4_det.onnx";
  const std::string images = std::string(QTUNE_MODELS_DIR) + "/images";
  const std::string preprocess =
      "resize=320x320,scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225,bgr";
  std::string out = Temp("det_int8.onnx");
  CliResult q = RunQtuneCli("quantize " + det + " -o " + out + " --calib " + images +
                            " --preprocess " + preprocess + " --calib-samples 4");
  ASSERT_EQ(q.exit_code, 0) << q.out;
  CliResult e = RunQtuneCli("eval " + det + " " + out + " --data " + images + " --preprocess " +
                                preprocess + " --layer-samples 2 --worst 100000 --json",
                            /*with_stderr=*/false);
  ASSERT_EQ(e.exit_code, 0) << e.out;
  nlohmann::json j = nlohmann::json::parse(e.out);
  EXPECT_EQ(j["samples"], 8);
  EXPECT_EQ(j["layer_samples"], 2);
  // A probability map is not class scores: no top-1 figure, the reason instead.
  EXPECT_TRUE(j["top1_agreement"].is_null()) << j.dump();
  EXPECT_NE(j["top1_skipped"].get<std::string>().find("not class scores"), std::string::npos);
  ASSERT_GT(j["worst_layers"].size(), 100u);
  int quantized_inputs = 0;
  for (const auto& layer : j["worst_layers"]) {
    const std::string tensor = layer["tensor"].get<std::string>();
    EXPECT_EQ(tensor.find(".w_0"), std::string::npos) << "a weight: " << layer.dump();
    quantized_inputs += layer["compared_with"] != layer["tensor"];
  }
  EXPECT_GT(quantized_inputs, 20);
  CliResult missing = RunQtuneCli("eval " + det + " " + out + " --data " + images);
  EXPECT_EQ(missing.exit_code, 3) << missing.out;  // an image folder needs --preprocess
  fs::remove(out);
}

TEST(QuantizeCliTest, EvalTakesNamedInputs) {
  std::string out = Temp("named_int8.onnx");
  ASSERT_EQ(RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " -o " + out + " --calib " +
                        M("calib_512.npy"))
                .exit_code,
            0);
  CliResult e = RunQtuneCli("eval " + M("fmnist_resnet.onnx") + " " + out +
                                " --data input=" + M("test_2000.npy") + " --json --worst 1",
                            /*with_stderr=*/false);
  ASSERT_EQ(e.exit_code, 0) << e.out;
  EXPECT_EQ(nlohmann::json::parse(e.out)["samples"], 2000);
  CliResult wrong = RunQtuneCli("eval " + M("fmnist_resnet.onnx") + " " + out +
                                " --data images=" + M("test_2000.npy"));
  EXPECT_EQ(wrong.exit_code, 3) << wrong.out;
  EXPECT_NE(wrong.out.find("images"), std::string::npos) << wrong.out;
  fs::remove(out);
}

TEST(QuantizeCliTest, MinSqnrKeepsSensitiveLayersInFloatAndReportsIt) {
  CliResult r = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " --report --json --calib " +
                                M("calib_512.npy") + " --min-sqnr 44 --fallback-samples 64",
                            /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& f = j["accuracy_fallback"];
  ASSERT_TRUE(f.is_object()) << r.out;
  EXPECT_TRUE(f["reached"].get<bool>());
  EXPECT_EQ(f["samples"], 64);
  EXPECT_GE(f["sqnr_after_db"].get<double>(), 44.0);
  EXPECT_LT(f["sqnr_before_db"].get<double>(), 44.0);
  ASSERT_FALSE(f["layers_in_float"].empty());
  for (const auto& node : f["layers_in_float"]) {
    bool found = false;
    for (const auto& layer : j["layers"]) {
      if (layer["node"] != node) continue;
      found = true;
      EXPECT_FALSE(layer["quantized"].get<bool>()) << layer.dump();
      EXPECT_NE(layer["reason"].get<std::string>().find("accuracy fallback"), std::string::npos);
    }
    EXPECT_TRUE(found) << node;
  }
}

TEST(QuantizeCliTest, FallbackOptionsWithoutMinSqnrAreAUsageError) {
  CliResult r = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " --report --calib " +
                            M("calib_512.npy") + " --max-float-fraction 0.5");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--min-sqnr"), std::string::npos) << r.out;
}

TEST(QuantizeCliTest, MinSqnrContradictingTheRecipeIsAUsageError) {
  std::string recipe = Temp("fallback.yaml");
  std::ofstream(recipe) << "imports: {base: int8}\n$import: base\n"
                           "accuracy_fallback: {min_sqnr_db: 44}\n";
  CliResult r = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " --report --calib " +
                            M("calib_512.npy") + " --recipe " + recipe + " --min-sqnr 30");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--min-sqnr 30 contradicts"), std::string::npos) << r.out;
  CliResult agree =
      RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " --report --json --calib " +
                      M("calib_512.npy") + " --recipe " + recipe + " --fallback-samples 64",
                  /*with_stderr=*/false);
  ASSERT_EQ(agree.exit_code, 0) << agree.out;
  nlohmann::json j = nlohmann::json::parse(agree.out);
  EXPECT_EQ(j["accuracy_fallback"]["target_db"], 44.0);
  EXPECT_EQ(j["accuracy_fallback"]["samples"], 64);
  fs::remove(recipe);
}

TEST(QuantizeCliTest, UnreachableMinSqnrExits1AndStillWritesTheBestModel) {
  std::string out = Temp("fallback.onnx");
  CliResult r = RunQtuneCli("quantize " + M("fmnist_resnet.onnx") + " -o " + out + " --calib " +
                            M("calib_512.npy") + " --min-sqnr 300 --max-float-fraction 0.2");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("did not reach 300.0 dB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NOT REACHED"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(out));
  fs::remove(out);
}

}  // namespace
}  // namespace qtune
