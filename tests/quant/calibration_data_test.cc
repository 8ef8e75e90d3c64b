// Calibration data sources (calibration_data.h): .npy / .npz arrays, image folders with a
// preprocess spec, random data; and every error naming the file and what to do.
#include "quant/calibration_data.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/file_io.h"
#include "core/npy.h"
#include "core/npz.h"
#include "ir/builder.h"

namespace qtune::quant {
namespace {

namespace fs = std::filesystem;
using ir::GraphBuilder;

class CalibrationDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qtune_calibration_data_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a float32 array whose element i is `offset + i`.
  std::string WriteIota(const std::string& name, std::vector<int64_t> sizes, float offset = 0) {
    Tensor t = Tensor::Allocate(DataType::kFloat32, sizes).value();
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = offset + i;
    EXPECT_TRUE(WriteNpy(Path(name), t).ok());
    return Path(name);
  }

  // Inputs a: [N,2,3] and b: [N,4], float32, symbolic batch.
  static std::unique_ptr<ir::Graph> TwoInputModel() {
    GraphBuilder b(17);
    ir::Value* a =
        b.Input("a", DataType::kFloat32, Shape({Dim::Symbolic("N"), Dim::Known(2), Dim::Known(3)}));
    ir::Value* c = b.Input("b", DataType::kFloat32, Shape({Dim::Symbolic("N"), Dim::Known(4)}));
    b.Output(b.Op("Relu", {a}));
    b.Output(b.Op("Relu", {c}));
    return b.Build();
  }

  static std::unique_ptr<ir::Graph> ImageModel(std::vector<Dim> dims) {
    GraphBuilder b(17);
    ir::Value* x = b.Input("x", DataType::kFloat32, Shape(std::move(dims)));
    b.Output(b.Op("Relu", {x}));
    return b.Build();
  }

  fs::path dir_;
};

void ExpectErrorMentions(const Status& status, const std::vector<std::string>& words) {
  ASSERT_FALSE(status.ok());
  for (const auto& word : words) {
    EXPECT_NE(status.message().find(word), std::string::npos)
        << "'" << word << "' missing from: " << status.message();
  }
}

TEST_F(CalibrationDataTest, NamedNpyFilesAreBatchedAlongTheFirstAxis) {
  auto model = TwoInputModel();
  std::string a = WriteIota("a.npy", {5, 2, 3});
  std::string b = WriteIota("b.npy", {5, 4}, 100);
  auto source = OpenCalibrationData({"a=" + a, "b=" + b}, "", *model);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->num_samples(), 5);
  auto batch = (*source)->Batch(1, 3);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->at("a").sizes(), (std::vector<int64_t>{3, 2, 3}));
  EXPECT_EQ(batch->at("a").data<float>()[0], 6.0f);
  EXPECT_EQ(batch->at("a").data<float>()[17], 23.0f);
  EXPECT_EQ(batch->at("b").sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(batch->at("b").data<float>()[0], 104.0f);
  EXPECT_FALSE((*source)->Batch(4, 2).ok());
}

TEST_F(CalibrationDataTest, NpzArraysByInputName) {
  auto model = TwoInputModel();
  Tensor a = ReadNpy(WriteIota("a.npy", {4, 2, 3})).value();
  Tensor b = ReadNpy(WriteIota("b.npy", {4, 4})).value();
  Tensor labels = Tensor::FromVector<int64_t>({4}, {0, 1, 2, 3});
  ASSERT_TRUE(WriteNpz(Path("data.npz"), {{"b", b}, {"labels", labels}, {"a", a}}).ok());
  auto source = OpenCalibrationData({Path("data.npz")}, "", *model);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->num_samples(), 4);
  auto batch = (*source)->Batch(3, 1);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->at("b").data<float>()[0], 12.0f);
}

TEST_F(CalibrationDataTest, SingleInputTakesABareNpyOrAnyNpzKey) {
  auto model = ImageModel({Dim::Symbolic("N"), Dim::Known(1), Dim::Known(2), Dim::Known(2)});
  std::string npy = WriteIota("x.npy", {3, 1, 2, 2});
  auto bare = OpenCalibrationData({npy}, "", *model);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ((*bare)->num_samples(), 3);
  ASSERT_TRUE(WriteNpz(Path("x.npz"), {{"arr_0", ReadNpy(npy).value()}}).ok());
  auto npz = OpenCalibrationData({Path("x.npz")}, "", *model);
  ASSERT_TRUE(npz.ok()) << npz.status().ToString();
  EXPECT_EQ((*npz)->num_samples(), 3);
}

TEST_F(CalibrationDataTest, MissingInputIsNamed) {
  auto model = TwoInputModel();
  std::string a = WriteIota("a.npy", {5, 2, 3});
  ExpectErrorMentions(OpenCalibrationData({"a=" + a}, "", *model).status(), {"'b'", "b=FILE.npy"});
}

TEST_F(CalibrationDataTest, SampleCountMismatchNamesTheFiles) {
  auto model = TwoInputModel();
  std::string a = WriteIota("a.npy", {5, 2, 3});
  std::string b = WriteIota("b.npy", {6, 4});
  ExpectErrorMentions(OpenCalibrationData({"a=" + a, "b=" + b}, "", *model).status(),
                      {"b.npy", "a.npy", "6", "5", "same number"});
}

TEST_F(CalibrationDataTest, DtypeMismatchNamesTheFileAndBothTypes) {
  auto model = TwoInputModel();
  Tensor wide = Tensor::Allocate(DataType::kFloat64, {5, 2, 3}).value();
  ASSERT_TRUE(WriteNpy(Path("a64.npy"), wide).ok());
  std::string b = WriteIota("b.npy", {5, 4});
  ExpectErrorMentions(OpenCalibrationData({"a=" + Path("a64.npy"), "b=" + b}, "", *model).status(),
                      {"a64.npy", "float64", "float32", "astype"});
}

TEST_F(CalibrationDataTest, SizesIncompatibleWithTheModelAreRejected) {
  auto model = TwoInputModel();
  std::string a = WriteIota("a.npy", {5, 3, 3});
  std::string b = WriteIota("b.npy", {5, 4});
  ExpectErrorMentions(OpenCalibrationData({"a=" + a, "b=" + b}, "", *model).status(),
                      {"a.npy", "5x3x3", "[N,2,3]"});
  std::string flat = WriteIota("flat.npy", {5, 6});
  ExpectErrorMentions(OpenCalibrationData({"a=" + flat, "b=" + b}, "", *model).status(),
                      {"flat.npy"});
}

TEST_F(CalibrationDataTest, MissingAndMalformedFilesAreNamed) {
  auto model = TwoInputModel();
  std::string b = WriteIota("b.npy", {5, 4});
  Status missing = OpenCalibrationData({"a=" + Path("nope.npy"), "b=" + b}, "", *model).status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  ExpectErrorMentions(missing, {"nope.npy"});
  ASSERT_TRUE(WriteFileAtomic(Path("junk.npy"), "this is not numpy").ok());
  ExpectErrorMentions(OpenCalibrationData({"a=" + Path("junk.npy"), "b=" + b}, "", *model).status(),
                      {"junk.npy"});
  ASSERT_TRUE(WriteFileAtomic(Path("junk.npz"), "PK this is not a zip").ok());
  ExpectErrorMentions(OpenCalibrationData({Path("junk.npz")}, "", *model).status(), {"junk.npz"});
  ExpectErrorMentions(OpenCalibrationData({Path("nowhere")}, "", *model).status(),
                      {"nowhere", "no such"});
  ExpectErrorMentions(OpenCalibrationData({"c=" + b}, "", *model).status(), {"'c'", "'a'", "'b'"});
  ExpectErrorMentions(OpenCalibrationData({b}, "", *model).status(), {"NAME=FILE.npy"});
  ExpectErrorMentions(OpenCalibrationData({"a=" + b}, "resize=3", *model).status(),
                      {"image folders only"});
}

constexpr const char* kImageNetSpec =
    "resize=256,crop=224,scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225";

TEST_F(CalibrationDataTest, ImageFolderWithImageNetPreprocessing) {
  auto model = ImageModel({Dim::Symbolic("N"), Dim::Known(3), Dim::Known(224), Dim::Known(224)});
  auto source = OpenCalibrationData({QTUNE_MODELS_DIR "/images"}, kImageNetSpec, *model);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  ASSERT_EQ((*source)->num_samples(), 8);  // 6 .jpg + 2 .png
  auto batch = (*source)->Batch(0, 8);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  const Tensor& x = batch->at("x");
  EXPECT_EQ(x.sizes(), (std::vector<int64_t>{8, 3, 224, 224}));
  // Channel c spans [(0 - mean) / std, (1 - mean) / std]; real photos reach near both ends.
  const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  for (int c = 0; c < 3; ++c) {
    float lo = 1e9f, hi = -1e9f;
    for (int64_t n = 0; n < 8; ++n) {
      const float* plane = x.data<float>() + (n * 3 + c) * 224 * 224;
      auto [mn, mx] = std::minmax_element(plane, plane + 224 * 224);
      lo = std::min(lo, *mn);
      hi = std::max(hi, *mx);
    }
    const float lowest = -mean[c] / std[c], highest = (1.0f - mean[c]) / std[c];
    EXPECT_GE(lo, lowest - 1e-4f) << "channel " << c;
    EXPECT_LE(hi, highest + 1e-4f) << "channel " << c;
    EXPECT_LT(lo, lowest + 0.3f) << "channel " << c;
    EXPECT_GT(hi, highest - 0.3f) << "channel " << c;
  }
  // Batches are independent of how they are cut.
  auto last = (*source)->Batch(7, 1);
  ASSERT_TRUE(last.ok());
  const float* tail = x.data<float>() + 7 * 3 * 224 * 224;
  EXPECT_TRUE(std::equal(tail, tail + 3 * 224 * 224, last->at("x").data<float>()));
}

TEST_F(CalibrationDataTest, ImageFolderTakesTheModelSizeGrayAndNhwc) {
  auto model = ImageModel({Dim::Known(1), Dim::Known(32), Dim::Known(48), Dim::Known(1)});
  auto source = OpenCalibrationData({QTUNE_MODELS_DIR "/images"}, "gray,nhwc", *model);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto batch = (*source)->Batch(2, 2);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  const Tensor& x = batch->at("x");
  EXPECT_EQ(x.sizes(), (std::vector<int64_t>{2, 32, 48, 1}));
  auto [mn, mx] = std::minmax_element(x.data<float>(), x.data<float>() + x.num_elements());
  EXPECT_GE(*mn, 0.0f);
  EXPECT_LE(*mx, 255.0f);
  EXPECT_GT(*mx - *mn, 100.0f);  // real contrast, not a constant fill
}

TEST_F(CalibrationDataTest, ImageFolderMismatchesSayWhatToDo) {
  const std::string images = QTUNE_MODELS_DIR "/images";
  auto gray_model = ImageModel({Dim::Symbolic("N"), Dim::Known(1), Dim::Known(28), Dim::Known(28)});
  ExpectErrorMentions(OpenCalibrationData({images}, "", *gray_model).status(), {"gray"});
  auto model = ImageModel({Dim::Symbolic("N"), Dim::Known(3), Dim::Known(224), Dim::Known(224)});
  ExpectErrorMentions(OpenCalibrationData({images}, "resize=256,crop=200", *model).status(),
                      {"200x200", "224x224"});
  ExpectErrorMentions(OpenCalibrationData({images}, "resize=256,blur=3", *model).status(),
                      {"blur=3", "accepted"});
  auto dynamic =
      ImageModel({Dim::Symbolic("N"), Dim::Known(3), Dim::Symbolic("H"), Dim::Symbolic("W")});
  ExpectErrorMentions(OpenCalibrationData({images}, "resize=256", *dynamic).status(), {"crop=HxW"});
  auto ok = OpenCalibrationData({images}, "resize=64x96", *dynamic);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)->Batch(0, 1)->at("x").sizes(), (std::vector<int64_t>{1, 3, 64, 96}));
  ExpectErrorMentions(OpenCalibrationData({dir_.string()}, "", *model).status(), {"no .jpg"});
}

TEST_F(CalibrationDataTest, CorruptOrTruncatedImagesNameTheFile) {
  auto model = ImageModel({Dim::Symbolic("N"), Dim::Known(3), Dim::Known(16), Dim::Known(16)});
  std::string jpeg = ReadFile(QTUNE_MODELS_DIR "/images/home.jpg").value();
  ASSERT_TRUE(WriteFileAtomic(Path("a_good.jpg"), jpeg).ok());
  ASSERT_TRUE(WriteFileAtomic(Path("b_truncated.jpg"), jpeg.substr(0, jpeg.size() / 2)).ok());
  ASSERT_TRUE(WriteFileAtomic(Path("c_text.png"), "hello").ok());
  std::string png = ReadFile(QTUNE_MODELS_DIR "/images/skimage_text.png").value();
  ASSERT_TRUE(WriteFileAtomic(Path("d_truncated.png"), png.substr(0, png.size() / 2)).ok());
  ASSERT_TRUE(WriteFileAtomic(Path("notes.txt"), "not an image").ok());  // not listed
  auto source = OpenCalibrationData({dir_.string()}, "", *model);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  ASSERT_EQ((*source)->num_samples(), 4);
  EXPECT_TRUE((*source)->Batch(0, 1).ok());
  ExpectErrorMentions((*source)->Batch(1, 1).status(), {"b_truncated.jpg"});
  ExpectErrorMentions((*source)->Batch(2, 1).status(), {"c_text.png", "not a JPEG or PNG"});
  ExpectErrorMentions((*source)->Batch(3, 1).status(), {"d_truncated.png"});
}

TEST_F(CalibrationDataTest, RandomDataIsUniformAndIndependentOfBatching) {
  auto model = TwoInputModel();
  RandomDataOptions options;
  options.num_samples = 10;
  options.seed = 7;
  options.low = -2.0f;
  options.high = 3.0f;
  auto source = MakeRandomCalibrationData(*model, options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto all = (*source)->Batch(0, 10);
  auto part = (*source)->Batch(4, 3);
  ASSERT_TRUE(all.ok() && part.ok());
  const Tensor& a = all->at("a");
  EXPECT_EQ(a.sizes(), (std::vector<int64_t>{10, 2, 3}));
  EXPECT_TRUE(
      std::equal(a.data<float>() + 4 * 6, a.data<float>() + 7 * 6, part->at("a").data<float>()));
  auto [mn, mx] = std::minmax_element(a.data<float>(), a.data<float>() + a.num_elements());
  EXPECT_GE(*mn, -2.0f);
  EXPECT_LT(*mx, 3.0f);
  EXPECT_LT(*mn, -1.0f);
  EXPECT_GT(*mx, 2.0f);
  auto dynamic = ImageModel({Dim::Symbolic("N"), Dim::Known(3), Dim::Symbolic("H"), Dim::Known(4)});
  ExpectErrorMentions(MakeRandomCalibrationData(*dynamic, options).status(), {"'x'", "real data"});
}

}  // namespace
}  // namespace qtune::quant
