#include "ocr_lines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/file_io.h"
#include "quant/image_preprocess.h"
#include "runtime/session.h"

namespace qtune::quant::testing {
namespace {

constexpr float kMapThreshold = 0.3f;  // DBNet's binarization threshold
constexpr float kBoxThreshold = 0.6f;  // mean probability a box needs (box_thresh)
constexpr int64_t kMinBoxSide = 3;     // map pixels (min_size)
constexpr double kUnclipRatio = 1.5;
constexpr int64_t kDetLimitSide = 960;

int64_t RoundTo32(double v) { return std::max<int64_t>(32, std::llround(v / 32.0) * 32); }

// One 8-connected component of the thresholded map: its bounding box (map pixels,
// inclusive) and mean probability.
struct Component {
  int64_t x0, y0, x1, y1;
  double mean;
};

std::vector<Component> Components(const float* map, int64_t h, int64_t w) {
  std::vector<Component> out;
  std::vector<uint8_t> seen(static_cast<size_t>(h * w), 0);
  std::vector<int64_t> stack;
  for (int64_t start = 0; start < h * w; ++start) {
    if (seen[start] || map[start] <= kMapThreshold) continue;
    Component c{w, h, -1, -1, 0.0};
    int64_t count = 0;
    double sum = 0;
    seen[start] = 1;
    stack.push_back(start);
    while (!stack.empty()) {
      const int64_t p = stack.back();
      stack.pop_back();
      const int64_t y = p / w, x = p % w;
      c.x0 = std::min(c.x0, x), c.x1 = std::max(c.x1, x);
      c.y0 = std::min(c.y0, y), c.y1 = std::max(c.y1, y);
      sum += map[p];
      ++count;
      for (int64_t dy = -1; dy <= 1; ++dy) {
        for (int64_t dx = -1; dx <= 1; ++dx) {
          const int64_t ny = y + dy, nx = x + dx;
          if (ny < 0 || ny >= h || nx < 0 || nx >= w) continue;
          const int64_t q = ny * w + nx;
          if (seen[q] || map[q] <= kMapThreshold) continue;
          seen[q] = 1;
          stack.push_back(q);
        }
      }
    }
    c.mean = sum / static_cast<double>(count);
    out.push_back(c);
  }
  return out;
}

// Luma of pixel (x, y).
double Luma(const RgbImage& image, int64_t x, int64_t y) {
  const uint8_t* p = image.pixels.data() + (y * image.width + x) * 3;
  return 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
}

// Standard deviation of the luma of column x over rows [y0, y1).
double ColumnContrast(const RgbImage& image, int64_t x, int64_t y0, int64_t y1) {
  double sum = 0, sum_sq = 0;
  for (int64_t y = y0; y < y1; ++y) {
    const double v = Luma(image, x, y);
    sum += v;
    sum_sq += v * v;
  }
  const double n = static_cast<double>(y1 - y0);
  return std::sqrt(std::max(0.0, sum_sq / n - (sum / n) * (sum / n)));
}

}  // namespace

StatusOr<std::vector<TextBox>> DetectLines(const ir::Graph& det, const RgbImage& image) {
  const double ratio =
      std::min(1.0, double(kDetLimitSide) / double(std::max(image.width, image.height)));
  const ImageSize size{RoundTo32(image.height * ratio), RoundTo32(image.width * ratio)};
  PreprocessSpec spec;
  spec.resize_exact = size;
  spec.scale = 1.0f / 255.0f;
  spec.mean = {0.485f, 0.456f, 0.406f};  // listed in B, G, R order as PaddleOCR applies them
  spec.std = {0.229f, 0.224f, 0.225f};
  spec.bgr = true;
  ASSIGN_OR_RETURN(Tensor x, Tensor::Allocate(DataType::kFloat32, {1, 3, size.height, size.width}));
  RETURN_IF_ERROR(PreprocessImage(image, spec, size, "det input", x.data<float>()));
  runtime::SessionOptions options;
  options.threads = 2;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(det, options));
  ASSIGN_OR_RETURN(auto outputs, session->Run({{"x", x}}));
  const Tensor& map = outputs.at(0).second;
  if (map.rank() != 4 || map.size(2) != size.height || map.size(3) != size.width) {
    return InvalidArgumentError("DetectLines: the detector's output is not a [1,1,H,W] map");
  }
  const double sx = double(image.width) / double(size.width);
  const double sy = double(image.height) / double(size.height);
  std::vector<TextBox> boxes;
  for (const Component& c : Components(map.data<float>(), size.height, size.width)) {
    const double w = double(c.x1 - c.x0 + 1), h = double(c.y1 - c.y0 + 1);
    if (std::min(w, h) < kMinBoxSide || c.mean < kBoxThreshold) continue;
    const double grow = w * h * kUnclipRatio / (2.0 * (w + h));
    TextBox box;
    box.x0 = std::clamp<int64_t>(std::llround((c.x0 - grow) * sx), 0, image.width);
    box.x1 = std::clamp<int64_t>(std::llround((c.x1 + 1 + grow) * sx), 0, image.width);
    box.y0 = std::clamp<int64_t>(std::llround((c.y0 - grow) * sy), 0, image.height);
    box.y1 = std::clamp<int64_t>(std::llround((c.y1 + 1 + grow) * sy), 0, image.height);
    if (box.height() <= kMinBoxSide || box.width() < box.height()) continue;
    boxes.push_back(box);
  }
  std::sort(boxes.begin(), boxes.end(), [](const TextBox& a, const TextBox& b) {
    return a.y0 != b.y0 ? a.y0 < b.y0 : a.x0 < b.x0;
  });
  return boxes;
}

std::vector<TextBox> SplitLongLines(const RgbImage& image, const std::vector<TextBox>& boxes) {
  std::vector<TextBox> out;
  for (const TextBox& box : boxes) {
    const double fits = double(box.height()) * kRecWidth / kRecHeight;  // widest that fits
    const int64_t pieces = static_cast<int64_t>(std::ceil(box.width() / fits - 1e-9));
    int64_t left = box.x0;
    for (int64_t i = 1; i < pieces; ++i) {
      const int64_t even = box.x0 + box.width() * i / pieces;
      const int64_t reach = box.width() / (4 * pieces);
      int64_t cut = even;
      double best = 1e30;
      for (int64_t x = std::max(left + 1, even - reach); x <= even + reach && x < box.x1; ++x) {
        const double contrast = ColumnContrast(image, x, box.y0, box.y1);
        if (contrast < best) best = contrast, cut = x;
      }
      out.push_back({left, box.y0, cut, box.y1});
      left = cut;
    }
    out.push_back({left, box.y0, box.x1, box.y1});
  }
  return out;
}

Status WriteRecInput(const RgbImage& image, const TextBox& box, float* out) {
  if (box.width() <= 0 || box.height() <= 0) {
    return InvalidArgumentError("WriteRecInput: an empty box");
  }
  RgbImage crop;
  crop.width = box.width();
  crop.height = box.height();
  crop.pixels.resize(static_cast<size_t>(crop.width * crop.height * 3));
  for (int64_t y = 0; y < crop.height; ++y) {
    std::memcpy(crop.pixels.data() + y * crop.width * 3,
                image.pixels.data() + ((box.y0 + y) * image.width + box.x0) * 3,
                static_cast<size_t>(crop.width * 3));
  }
  const int64_t width = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(double(kRecHeight) * crop.width / crop.height)), 1, kRecWidth);
  PreprocessSpec spec;
  spec.resize_exact = ImageSize{kRecHeight, width};
  spec.scale = 1.0f / 255.0f;
  spec.mean = {0.5f};
  spec.std = {0.5f};
  spec.bgr = true;
  std::vector<float> resized(static_cast<size_t>(3 * kRecHeight * width));
  RETURN_IF_ERROR(PreprocessImage(crop, spec, *spec.resize_exact, "line crop", resized.data()));
  std::fill(out, out + 3 * kRecHeight * kRecWidth, 0.0f);
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < kRecHeight; ++y) {
      std::memcpy(out + (c * kRecHeight + y) * kRecWidth,
                  resized.data() + (c * kRecHeight + y) * width, width * sizeof(float));
    }
  }
  return Status::Ok();
}

StatusOr<LineCrops> CropLines(const ir::Graph& det, const std::vector<std::string>& paths) {
  std::vector<std::pair<RgbImage, TextBox>> lines;
  std::vector<std::string> where;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(RgbImage image, ReadImage(path));
    ASSIGN_OR_RETURN(std::vector<TextBox> boxes, DetectLines(det, image));
    for (const TextBox& box : SplitLongLines(image, boxes)) {
      char text[160];
      std::snprintf(text, sizeof(text), "%s (%lld,%lld)-(%lld,%lld)",
                    std::filesystem::path(path).filename().c_str(), static_cast<long long>(box.x0),
                    static_cast<long long>(box.y0), static_cast<long long>(box.x1),
                    static_cast<long long>(box.y1));
      where.push_back(text);
      lines.emplace_back(image, box);
    }
  }
  const int64_t n = static_cast<int64_t>(lines.size());
  ASSIGN_OR_RETURN(Tensor crops,
                   Tensor::Allocate(DataType::kFloat32, {n, 3, kRecHeight, kRecWidth}));
  for (int64_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(WriteRecInput(lines[i].first, lines[i].second,
                                  crops.data<float>() + i * 3 * kRecHeight * kRecWidth));
  }
  return LineCrops{std::move(crops), std::move(where)};
}

StatusOr<std::vector<std::string>> LoadCtcCharacters(const std::string& dictionary_path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(dictionary_path));
  std::vector<std::string> characters = {""};
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    characters.push_back(line);
    start = end + 1;
  }
  if (characters.size() < 2) {
    return InvalidArgumentError(dictionary_path + ": an empty character dictionary");
  }
  characters.push_back(" ");
  return characters;
}

std::vector<std::string> CtcGreedyDecode(const Tensor& scores,
                                         const std::vector<std::string>& characters) {
  const int64_t n = scores.size(0), steps = scores.size(1), classes = scores.size(2);
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) {
    std::string text;
    int64_t previous = -1;
    for (int64_t t = 0; t < steps; ++t) {
      const float* row = scores.data<float>() + (i * steps + t) * classes;
      const int64_t best = std::max_element(row, row + classes) - row;
      if (best != 0 && best != previous) text += characters[static_cast<size_t>(best)];
      previous = best;
    }
    out.push_back(std::move(text));
  }
  return out;
}

}  // namespace qtune::quant::testing
