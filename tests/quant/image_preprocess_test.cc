// The image preprocess spec (image_preprocess.h): parsing, resampling, cropping,
// normalization, channel order and layout on small synthetic images.
#include "quant/image_preprocess.h"

#include <gtest/gtest.h>

#include <array>

namespace qtune::quant {
namespace {

// A width x height RGB image where pixel (y, x) is (r(y,x), g, b) from `fn`.
template <typename Fn>
RgbImage MakeImage(int64_t height, int64_t width, Fn fn) {
  RgbImage image{width, height, std::vector<uint8_t>(height * width * 3)};
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      auto rgb = fn(y, x);
      for (int c = 0; c < 3; ++c) image.pixels[(y * width + x) * 3 + c] = rgb[c];
    }
  }
  return image;
}

TEST(ImagePreprocessTest, ParsesTheDocumentedSpec) {
  auto spec = ParsePreprocessSpec(
      "resize=256,crop=224,scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225,bgr,"
      "nhwc");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->resize_shorter, 256);
  EXPECT_EQ(spec->crop, (ImageSize{224, 224}));
  EXPECT_FLOAT_EQ(spec->scale, 0.00392157f);
  EXPECT_EQ(spec->mean.size(), 3u);
  EXPECT_FLOAT_EQ(spec->std[2], 0.225f);
  EXPECT_TRUE(spec->bgr && spec->nhwc && !spec->gray);
  auto exact = ParsePreprocessSpec("resize=32x48,crop=16x24,gray");
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->resize_exact, (ImageSize{32, 48}));
  EXPECT_EQ(exact->crop, (ImageSize{16, 24}));
  EXPECT_EQ(exact->channels(), 1);
  EXPECT_TRUE(ParsePreprocessSpec("").ok());
}

TEST(ImagePreprocessTest, RejectsBadItems) {
  for (const char* bad : {"resize=0", "resize=abc", "crop=3x", "mean=1:2", "std=0",
                          "scale=", "flip", "mean=0.5:0.5:0.5,gray", "scale=1:2"}) {
    auto spec = ParsePreprocessSpec(bad);
    EXPECT_FALSE(spec.ok()) << bad;
  }
}

TEST(ImagePreprocessTest, ConstantImageStaysConstantThroughResizeAndNormalization) {
  RgbImage image = MakeImage(37, 53, [](int64_t, int64_t) {
    return std::array<uint8_t, 3>{200, 100, 50};
  });
  PreprocessSpec spec =
      ParsePreprocessSpec("resize=20,crop=16x18,scale=0.5,mean=100:50:25,std=2:5:25").value();
  std::vector<float> out(3 * 16 * 18);
  ASSERT_TRUE(PreprocessImage(image, spec, {16, 18}, "const", out.data()).ok());
  for (int64_t i = 0; i < 16 * 18; ++i) {
    ASSERT_NEAR(out[i], 0.0f, 1e-4f);                // (200 * 0.5 - 100) / 2
    ASSERT_NEAR(out[16 * 18 + i], 0.0f, 1e-4f);      // (100 * 0.5 - 50) / 5
    ASSERT_NEAR(out[2 * 16 * 18 + i], 0.0f, 1e-4f);  // (50 * 0.5 - 25) / 25
  }
}

TEST(ImagePreprocessTest, ShrinkingAveragesInsteadOfAliasing) {
  // A one-pixel checkerboard of 0 and 255 shrunk 4x: antialiasing gives ~127.5 everywhere;
  // point-sampled bilinear would give 0s and 255s.
  RgbImage image = MakeImage(64, 64, [](int64_t y, int64_t x) {
    uint8_t v = (x + y) % 2 ? 255 : 0;
    return std::array<uint8_t, 3>{v, v, v};
  });
  PreprocessSpec spec = ParsePreprocessSpec("resize=16x16").value();
  std::vector<float> out(3 * 16 * 16);
  ASSERT_TRUE(PreprocessImage(image, spec, {16, 16}, "checker", out.data()).ok());
  for (float v : out) ASSERT_NEAR(v, 127.5f, 12.0f);
}

TEST(ImagePreprocessTest, ShorterSideResizeKeepsAspectAndCropIsCentered) {
  // 40 rows x 80 columns; the left half red, the right half blue. resize=20 gives 20x40;
  // crop=20x20 takes columns 10..29, half red, half blue.
  RgbImage image = MakeImage(40, 80, [](int64_t, int64_t x) {
    return x < 40 ? std::array<uint8_t, 3>{255, 0, 0} : std::array<uint8_t, 3>{0, 0, 255};
  });
  PreprocessSpec spec = ParsePreprocessSpec("resize=20,crop=20").value();
  std::vector<float> out(3 * 20 * 20);
  ASSERT_TRUE(PreprocessImage(image, spec, {20, 20}, "halves", out.data()).ok());
  EXPECT_NEAR(out[5 * 20 + 2], 255.0f, 1e-3f);             // red plane, left
  EXPECT_NEAR(out[5 * 20 + 17], 0.0f, 1e-3f);              // red plane, right
  EXPECT_NEAR(out[2 * 400 + 5 * 20 + 17], 255.0f, 1e-3f);  // blue plane, right
}

TEST(ImagePreprocessTest, BgrSwapsChannelsAndNhwcInterleaves) {
  RgbImage image = MakeImage(2, 2, [](int64_t, int64_t) {
    return std::array<uint8_t, 3>{1, 2, 3};
  });
  PreprocessSpec spec = ParsePreprocessSpec("bgr,nhwc").value();
  std::vector<float> out(12);
  ASSERT_TRUE(PreprocessImage(image, spec, {2, 2}, "tiny", out.data()).ok());
  EXPECT_EQ(out, (std::vector<float>{3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1}));
  PreprocessSpec gray = ParsePreprocessSpec("gray").value();
  std::vector<float> one(4);
  ASSERT_TRUE(PreprocessImage(image, gray, {2, 2}, "tiny", one.data()).ok());
  EXPECT_NEAR(one[0], 0.299f * 1 + 0.587f * 2 + 0.114f * 3, 1e-4f);
}

TEST(ImagePreprocessTest, CropLargerThanTheImageNamesTheFile) {
  RgbImage image = MakeImage(10, 12, [](int64_t, int64_t) { return std::array<uint8_t, 3>{}; });
  PreprocessSpec spec = ParsePreprocessSpec("crop=16").value();
  std::vector<float> out(3 * 16 * 16);
  Status status = PreprocessImage(image, spec, {16, 16}, "small.png", out.data());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("small.png"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace qtune::quant
