// `qtune quantize` on the real models: PP-OCRv4 det (probability-map IoU against fp32 on
// held-out images, in qtune and in ONNX Runtime), PP-OCR cls (int8 and fp8) and ResNet-18
// (random weights, built in C++: util/test_models.h). Calibration images come from
// models/images through the documented --preprocess specs.
//
// The detector calibrates on five photos of models/images and is measured on the three
// images with text (board, imageTextN, skimage_text), which it never saw, at 640x640
// (at 320x320 the float model finds no text in two of them). Only imageTextN has much
// text (16% of the map above the threshold; skimage_text 3.7%, board 0.5%); IoU on a
// near-empty map swings with a few hundred pixels.
//
// Plain int8 does not reach the issue's target, IoU >= 0.95 on every held-out image, with
// any calibrator or recipe (docs/quantize.md, "Measured on the bundled models"):
// DetInt8KeepsProbabilityMapIoUOnHeldOutImages pins what it reaches. The accuracy
// fallback (--min-sqnr) reaches it: DetInt8WithAccuracyFallbackReachesIoU095OnHeldOutImages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "export_test_util.h"
#include "ir/onnx_io.h"
#include "ir/verify.h"
#include "quant/calibration_data.h"
#include "quant/quantize_model.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "util/test_models.h"

namespace qtune::quant {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kDetCalibImages = {"building.jpg", "fruits.jpg", "home.jpg",
                                                  "messi5.jpg", "squirrel_cls.jpg"};
const std::vector<std::string> kDetHeldOutImages = {"board.jpg", "imageTextN.png",
                                                    "skimage_text.png"};
const std::vector<std::string> kAllImages = {"board.jpg",        "building.jpg",    "fruits.jpg",
                                             "home.jpg",         "imageTextN.png",  "messi5.jpg",
                                             "skimage_text.png", "squirrel_cls.jpg"};

// int8 with asymmetric (uint8, min/max) activations: the best the detector measured
// (docs/quantize.md). The asymmetric range is [min, max], whatever the calibrator.
const char kAsymmetricRecipe[] = R"(imports: {int8: int8}
quantizers:
  - $import: int8
  - name: "*input*_quantizer"
    symmetric: false
  - name: "*shortcut*_quantizer"
    symmetric: false
)";

// DBNet's binarization threshold (PaddleOCR DBPostProcess thresh).
constexpr float kDbThreshold = 0.3f;

std::string DetPreprocess(int size) {
  return "resize=" + std::to_string(size) + "x" + std::to_string(size) +
         ",scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225,bgr";
}
const char kClsPreprocess[] = "resize=48x192,scale=0.00784314,mean=1,bgr";
const char kImageNetPreprocess[] =
    "resize=256,crop=224,scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225";

std::string ModelPath(const std::string& relative) {
  return std::string(QTUNE_MODELS_DIR) + "/" + relative;
}

// A temporary folder of symlinks to some of models/images; removed on destruction.
class ImageSubset {
 public:
  ImageSubset(const std::string& tag, const std::vector<std::string>& names)
      : dir_(fs::temp_directory_path() /
             ("qtune_models_test_" + tag + "_" + std::to_string(getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const std::string& name : names)
      fs::create_symlink(ModelPath("images/" + name), dir_ / name);
  }
  ~ImageSubset() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  ImageSubset(const ImageSubset&) = delete;
  ImageSubset& operator=(const ImageSubset&) = delete;
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

// All images of `folder`, preprocessed for `model`'s input, as one batch.
StatusOr<Tensor> LoadImages(const std::string& folder, const std::string& preprocess,
                            const ir::Graph& model) {
  ASSIGN_OR_RETURN(auto source, OpenCalibrationData({folder}, preprocess, model));
  ASSIGN_OR_RETURN(auto batch, source->Batch(0, source->num_samples()));
  return batch.begin()->second.Clone();
}

struct QuantizeCase {
  std::string recipe = "int8";
  Target target = Target::kCpu;
  CalibratorKind calibrator = CalibratorKind::kMax;
  std::optional<double> min_sqnr_db;  // accuracy fallback target
};

std::string Describe(const QuantizeCase& c) {
  return c.recipe + "/" + TargetName(c.target) + "/" + CalibratorName(c.calibrator);
}

StatusOr<QuantizeModelResult> Quantize(const ir::Graph& model, const QuantizeCase& c,
                                       const std::string& calib_dir,
                                       const std::string& preprocess) {
  QuantizeModelOptions options;
  options.recipe = c.recipe;
  options.target = c.target;
  options.calibrator = c.calibrator;
  options.calib_specs = {calib_dir};
  options.preprocess = preprocess;
  options.threads = 2;
  options.show_progress = false;
  options.fallback.min_sqnr_db = c.min_sqnr_db;
  return QuantizeModel(model, options);
}

// IoU of the binarized probability maps (p > kDbThreshold) of image n of two [N,1,H,W]
// tensors; 1 when both maps are empty.
double ProbabilityMapIoU(const Tensor& a, const Tensor& b, int64_t n) {
  int64_t plane = a.num_elements() / a.size(0);
  const float* pa = a.data<float>() + n * plane;
  const float* pb = b.data<float>() + n * plane;
  int64_t both = 0, either = 0;
  for (int64_t i = 0; i < plane; ++i) {
    bool in_a = pa[i] > kDbThreshold, in_b = pb[i] > kDbThreshold;
    both += in_a && in_b;
    either += in_a || in_b;
  }
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

std::vector<double> PerImageIoU(const Tensor& fp32, const Tensor& quantized) {
  std::vector<double> iou;
  for (int64_t n = 0; n < fp32.size(0); ++n) iou.push_back(ProbabilityMapIoU(fp32, quantized, n));
  return iou;
}

void PrintPerImage(const std::string& what, const std::vector<double>& iou) {
  std::printf("%-48s", what.c_str());
  for (size_t i = 0; i < iou.size(); ++i)
    std::printf("  %s %.4f", kDetHeldOutImages[i].c_str(), iou[i]);
  std::printf("\n");
}

// A recipe file in the temp folder; removed on destruction.
class TempRecipe {
 public:
  TempRecipe(const std::string& tag, const std::string& text)
      : path_(fs::temp_directory_path() /
              ("qtune_models_test_" + tag + "_" + std::to_string(getpid()) + ".yaml")) {
    std::FILE* f = std::fopen(path_.c_str(), "w");
    if (f != nullptr) {
      std::fputs(text.c_str(), f);
      std::fclose(f);
    }
  }
  ~TempRecipe() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  TempRecipe(const TempRecipe&) = delete;
  TempRecipe& operator=(const TempRecipe&) = delete;
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// Fraction of each image's map above the threshold.
std::vector<double> TextFraction(const Tensor& map) {
  std::vector<double> out;
  int64_t plane = map.num_elements() / map.size(0);
  for (int64_t n = 0; n < map.size(0); ++n) {
    const float* p = map.data<float>() + n * plane;
    int64_t text = std::count_if(p, p + plane, [](float v) { return v > kDbThreshold; });
    out.push_back(static_cast<double>(text) / static_cast<double>(plane));
  }
  return out;
}

// How far qtune's output of the quantized model is from ONNX Runtime's on the same model,
// next to the same distance for the float model (the engines' own disagreement).
struct EngineAgreement {
  double fp32_rel_l2 = 0, fp32_max_diff = 0;
  double quant_rel_l2 = 0, quant_max_diff = 0;
  double quant_step = 0;  // max |output| / 127: one int8 step of the output's range
  // What quantization itself changes: quantized against fp32, in each engine.
  double qtune_quant_error = 0, ort_quant_error = 0;
};

EngineAgreement CompareEngines(const Tensor& qtune_fp, const Tensor& ort_fp, const Tensor& qtune_q,
                               const Tensor& ort_q) {
  EngineAgreement a;
  a.fp32_rel_l2 = qtune::testing::RelativeL2(qtune_fp, ort_fp);
  a.fp32_max_diff = qtune::testing::MaxAbsDiff(qtune_fp, ort_fp);
  a.quant_rel_l2 = qtune::testing::RelativeL2(qtune_q, ort_q);
  a.quant_max_diff = qtune::testing::MaxAbsDiff(qtune_q, ort_q);
  float amax = 0;
  for (float v : ort_q.span<float>()) amax = std::max(amax, std::abs(v));
  a.quant_step = amax / 127.0;
  a.qtune_quant_error = qtune::testing::RelativeL2(qtune_q, qtune_fp);
  a.ort_quant_error = qtune::testing::RelativeL2(ort_q, ort_fp);
  return a;
}

void PrintAgreement(const std::string& what, const EngineAgreement& a) {
  std::printf(
      "%s qtune vs onnxruntime: fp32 rel L2 %.2e max|d| %.2e; quantized rel L2 %.2e max|d| "
      "%.2e = %.2f int8 steps of the output range; quantized vs fp32 rel L2: qtune %.2e, "
      "onnxruntime %.2e\n",
      what.c_str(), a.fp32_rel_l2, a.fp32_max_diff, a.quant_rel_l2, a.quant_max_diff,
      a.quant_max_diff / a.quant_step, a.qtune_quant_error, a.ort_quant_error);
}

// The bound for "ONNX Runtime runs the exported model like qtune": the two engines'
// outputs on the quantized model differ (relative L2) by no more than ONNX Runtime's own
// quantized output differs from its fp32 output. Both engines round at every Q, but not
// always to the same side (ORT requantizes each fused op's output; qtune fuses further),
// and these differences grow through the network like quantization noise does.
// Measured ratios: det 0.32, cls int8 0.82, cls fp8 0.25, resnet18 0.70.
void ExpectAgreementBound(const std::string& name, const EngineAgreement& a) {
  EXPECT_LE(a.quant_rel_l2, a.ort_quant_error) << name;
  EXPECT_LT(a.fp32_rel_l2, 1e-4) << name << ": the engines disagree on the float model";
}

// The detector's numbers for one combination: IoU per held-out image in qtune and, when
// `with_ort`, in ONNX Runtime (each engine's quantized model against its own fp32 run).
struct DetResult {
  std::vector<double> qtune, ort;
  std::vector<double> text_fraction;  // of the fp32 map (qtune)
  EngineAgreement agreement;          // with_ort only
  std::optional<FallbackReport> fallback;
};

StatusOr<DetResult> MeasureDet(const QuantizeCase& c, int size, bool with_ort) {
  ASSIGN_OR_RETURN(auto model, ir::LoadModel(ModelPath("ppocr/ppocrv4_det.onnx")));
  ImageSubset calib("det_calib", kDetCalibImages);
  ImageSubset held_out("det_held_out", kDetHeldOutImages);
  ASSIGN_OR_RETURN(Tensor x, LoadImages(held_out.path(), DetPreprocess(size), *model));
  ASSIGN_OR_RETURN(auto result, Quantize(*model, c, calib.path(), DetPreprocess(size)));
  RETURN_IF_ERROR(ir::Verify(*result.quantized));
  DetResult out;
  out.fallback = result.fallback;
  ASSIGN_OR_RETURN(Tensor fp, testing::RunQtune(*model, "x", x, 2));
  ASSIGN_OR_RETURN(Tensor q, testing::RunQtune(*result.quantized, "x", x, 2));
  out.qtune = PerImageIoU(fp, q);
  out.text_fraction = TextFraction(fp);
  if (with_ort) {
    setenv("QTUNE_ORT_OPT_LEVEL", "all", 1);
    ASSIGN_OR_RETURN(Tensor ort_fp, testing::RunOrtOn(*model, "det_fp32", "x", x));
    ASSIGN_OR_RETURN(Tensor ort_q, testing::RunOrtOn(*result.quantized, "det_q", "x", x));
    out.ort = PerImageIoU(ort_fp, ort_q);
    out.agreement = CompareEngines(fp, ort_fp, q, ort_q);
  }
  return out;
}

void PrintDet(const std::string& tag, const DetResult& r) {
  PrintPerImage("IoU qtune " + tag, r.qtune);
  if (!r.ort.empty()) PrintPerImage("IoU onnxruntime " + tag, r.ort);
}

// A held-out image with at least this much text must keep the stricter bound.
constexpr double kTextRich = 0.05;

TEST(QuantizeModelsTest, DetInt8KeepsProbabilityMapIoUOnHeldOutImages) {
  TempRecipe recipe("det_asym", kAsymmetricRecipe);
  bool with_ort = qtune::testing::OrtAvailable();
  auto r = MeasureDet({recipe.path(), Target::kCpu, CalibratorKind::kMax}, 640, with_ort);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  PrintDet("int8 asymmetric/cpu/max 640x640", *r);
  auto check = [&](const char* engine, const std::vector<double>& iou) {
    for (size_t i = 0; i < iou.size(); ++i) {
      // Measured: imageTextN 0.949 (qtune) / 0.949 (ORT); board 0.71 / 0.67; skimage_text
      // 0.81 / 0.82.
      double bound = r->text_fraction[i] >= kTextRich ? 0.94 : 0.6;
      EXPECT_GE(iou[i], bound) << engine << ", " << kDetHeldOutImages[i] << " (text fraction "
                               << r->text_fraction[i] << ")";
    }
  };
  check("qtune", r->qtune);
  if (!with_ort) QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  check("onnxruntime", r->ort);
  PrintAgreement("ppocrv4_det int8", r->agreement);
  ExpectAgreementBound("ppocrv4_det", r->agreement);
}

// The issue's acceptance target, IoU >= 0.95 on every held-out image in both engines,
// reached by the accuracy fallback: the layers whose int8 costs the logits the most stay
// float until the logits reach 45 dB SQNR on the calibration photos. Measured: 19.7 dB ->
// 45.3 dB with 37 of 63 layers in float; IoU 0.969 / 0.965 / 0.962 (qtune and ORT alike).
TEST(QuantizeModelsTest, DetInt8WithAccuracyFallbackReachesIoU095OnHeldOutImages) {
  // The target comes from the recipe (docs/quantize.md's det_mixed.yaml).
  TempRecipe recipe("det_mixed",
                    std::string(kAsymmetricRecipe) + "accuracy_fallback: {min_sqnr_db: 45}\n");
  bool with_ort = qtune::testing::OrtAvailable();
  QuantizeCase c{recipe.path(), Target::kCpu, CalibratorKind::kMax};
  auto r = MeasureDet(c, 640, with_ort);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->fallback.has_value());
  const FallbackReport& f = *r->fallback;
  std::printf("accuracy fallback: %.1f dB -> %.1f dB, %zu layers in float\n", f.sqnr_before_db,
              f.sqnr_after_db, f.fallen_back.size());
  PrintDet("int8 asymmetric/cpu/max + fallback 45 dB", *r);
  EXPECT_TRUE(f.reached);
  // The output is a Sigmoid: its input (the logits) is what the fallback compares.
  EXPECT_EQ(f.measured, std::vector<std::string>{"p2o.Add.281"});
  for (size_t i = 0; i < r->qtune.size(); ++i) EXPECT_GE(r->qtune[i], 0.95) << kDetHeldOutImages[i];
  if (!with_ort) QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  for (size_t i = 0; i < r->ort.size(); ++i) EXPECT_GE(r->ort[i], 0.95) << kDetHeldOutImages[i];
  ExpectAgreementBound("ppocrv4_det with fallback", r->agreement);
}

// Every calibrator and recipe on the detector, for docs/quantize.md. Slow (about three
// minutes): run with --gtest_also_run_disabled_tests; QTUNE_DET_SIZE sets the input size.
TEST(QuantizeModelsTest, DISABLED_DetCalibratorSweep) {
  const char* size_env = std::getenv("QTUNE_DET_SIZE");
  int size = size_env ? std::atoi(size_env) : 640;
  bool with_ort = qtune::testing::OrtAvailable();
  TempRecipe asymmetric("det_asym", kAsymmetricRecipe);
  for (const std::string& recipe : {std::string("int8"), std::string("int8_residual")}) {
    for (CalibratorKind calibrator : {CalibratorKind::kMax, CalibratorKind::kPercentile,
                                      CalibratorKind::kEntropy, CalibratorKind::kMse}) {
      QuantizeCase c{recipe, Target::kCpu, calibrator};
      auto r = MeasureDet(c, size, with_ort);
      ASSERT_TRUE(r.ok()) << Describe(c) << ": " << r.status().ToString();
      PrintDet(Describe(c) + " " + std::to_string(size), *r);
    }
  }
  for (CalibratorKind calibrator : {CalibratorKind::kMax, CalibratorKind::kPercentile,
                                    CalibratorKind::kEntropy, CalibratorKind::kMse}) {
    auto r = MeasureDet({asymmetric.path(), Target::kCpu, calibrator}, size, with_ort);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    PrintDet(std::string("int8 asymmetric/cpu/") + CalibratorName(calibrator) + " " +
                 std::to_string(size),
             *r);
    if (calibrator == CalibratorKind::kMax) {
      PrintPerImage("text fraction of the fp32 map", r->text_fraction);
    }
  }
}

// Quantizes a classifier on all of models/images, then runs the quantized model in qtune
// and in ONNX Runtime on the same images.
struct ClassifierCase {
  std::string name, path, input, preprocess;
  QuantizeCase quantize;
};

struct ClassifierRun {
  Tensor qtune_fp, ort_fp, qtune_q, ort_q;
};

StatusOr<ClassifierRun> RunClassifier(const ClassifierCase& c) {
  ASSIGN_OR_RETURN(auto model, ir::LoadModel(c.path));
  ImageSubset images(c.name, kAllImages);
  ASSIGN_OR_RETURN(Tensor x, LoadImages(images.path(), c.preprocess, *model));
  ASSIGN_OR_RETURN(auto result, Quantize(*model, c.quantize, images.path(), c.preprocess));
  RETURN_IF_ERROR(ir::Verify(*result.quantized));
  if (result.summary.quantized_layers < 10)
    return FailedPreconditionError(c.name + ": only " +
                                   std::to_string(result.summary.quantized_layers) +
                                   " layers quantized:\n" + SummaryToText(result.summary));
  ClassifierRun run;
  ASSIGN_OR_RETURN(run.qtune_fp, testing::RunQtune(*model, c.input, x, 2));
  ASSIGN_OR_RETURN(run.qtune_q, testing::RunQtune(*result.quantized, c.input, x, 2));
  bool fp8 = c.quantize.recipe.rfind("fp8", 0) == 0;
  setenv("QTUNE_ORT_OPT_LEVEL", fp8 ? "basic" : "all", 1);
  ASSIGN_OR_RETURN(run.ort_fp, testing::RunOrtOn(*model, c.name + "_fp32", c.input, x));
  ASSIGN_OR_RETURN(run.ort_q, testing::RunOrtOn(*result.quantized, c.name + "_q", c.input, x));
  return run;
}

// max_steps: also bound max |qtune - ORT| in int8 steps of the output range (0: not).
void ExpectEnginesAgree(const ClassifierCase& c, double max_steps) {
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  auto run = RunClassifier(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EngineAgreement a = CompareEngines(run->qtune_fp, run->ort_fp, run->qtune_q, run->ort_q);
  PrintAgreement(c.name + " " + Describe(c.quantize), a);
  double top1_qtune = testing::Agreement(testing::Top1(run->qtune_fp), testing::Top1(run->qtune_q));
  double top1_ort = testing::Agreement(testing::Top1(run->ort_fp), testing::Top1(run->ort_q));
  std::printf("%s top-1 agreement with fp32 on %zu images: qtune %.3f, onnxruntime %.3f\n",
              c.name.c_str(), kAllImages.size(), top1_qtune, top1_ort);
  ExpectAgreementBound(c.name, a);
  if (max_steps > 0) {
    EXPECT_LE(a.quant_max_diff, max_steps * a.quant_step) << c.name;
  }
}

TEST(QuantizeModelsTest, ClsInt8RunsInOnnxRuntimeLikeInQtune) {
  ExpectEnginesAgree({"ppocr_cls", ModelPath("ppocr/ppocr_cls.onnx"), "x", kClsPreprocess, {}}, 0);
}

TEST(QuantizeModelsTest, ClsFp8RunsInOnnxRuntimeLikeInQtune) {
  ExpectEnginesAgree({"ppocr_cls_fp8",
                      ModelPath("ppocr/ppocr_cls.onnx"),
                      "x",
                      kClsPreprocess,
                      {"fp8", Target::kTrt, CalibratorKind::kMax}},
                     0);
}

TEST(QuantizeModelsTest, ResNet18Int8RunsInOnnxRuntimeLikeInQtune) {
  ExpectEnginesAgree({"resnet18", qtune::testing::ResNet18File(), "input", kImageNetPreprocess, {}},
                     3.0);
}

}  // namespace
}  // namespace qtune::quant
