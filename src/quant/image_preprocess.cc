#include "quant/image_preprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace qtune::quant {
namespace {

constexpr const char* kAcceptedItems =
    "resize=N, resize=HxW, crop=N, crop=HxW, scale=S, mean=M[:M:M], std=S[:S:S], gray, bgr, "
    "rgb, nhwc, nchw";

StatusOr<int64_t> ParsePositive(std::string_view text, std::string_view item) {
  std::string s(text);
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v <= 0 || v > (1 << 20)) {
    return InvalidArgumentError("preprocess spec: '" + std::string(item) +
                                "' needs a positive integer size");
  }
  return static_cast<int64_t>(v);
}

// "N" (square when `square` is set, else N alone) or "HxW".
StatusOr<ImageSize> ParseSize(std::string_view text, std::string_view item) {
  size_t x = text.find('x');
  if (x == std::string_view::npos) {
    ASSIGN_OR_RETURN(int64_t n, ParsePositive(text, item));
    return ImageSize{n, n};
  }
  ASSIGN_OR_RETURN(int64_t h, ParsePositive(text.substr(0, x), item));
  ASSIGN_OR_RETURN(int64_t w, ParsePositive(text.substr(x + 1), item));
  return ImageSize{h, w};
}

StatusOr<std::vector<float>> ParseFloats(std::string_view text, std::string_view item) {
  std::vector<float> values;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    std::string s(text.substr(start, colon == std::string_view::npos ? colon : colon - start));
    char* end = nullptr;
    float v = std::strtof(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(v)) {
      return InvalidArgumentError("preprocess spec: '" + std::string(item) +
                                  "' needs numbers separated by ':'");
    }
    values.push_back(v);
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return values;
}

// Separable resampling weights for one axis (PIL's bilinear filter: a triangle whose
// support widens with the shrink factor, so shrinking averages instead of aliasing).
struct AxisWeights {
  std::vector<int64_t> first;  // first source index per output index
  std::vector<int64_t> count;  // number of source indices per output index
  std::vector<float> weights;  // `max_count` weights per output index
  int64_t max_count = 0;
};

AxisWeights ComputeWeights(int64_t in_size, int64_t out_size) {
  AxisWeights axis;
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter_scale;  // bilinear support 1, widened when shrinking
  axis.max_count = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  axis.first.resize(out_size);
  axis.count.resize(out_size);
  axis.weights.assign(out_size * axis.max_count, 0.0f);
  for (int64_t i = 0; i < out_size; ++i) {
    double center = (i + 0.5) * scale;
    int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in_size);
    hi = std::min(hi, lo + axis.max_count);
    double total = 0.0;
    float* w = &axis.weights[i * axis.max_count];
    for (int64_t j = lo; j < hi; ++j) {
      double t = std::fabs((j - center + 0.5) / filter_scale);
      double v = std::max(0.0, 1.0 - t);
      w[j - lo] = static_cast<float>(v);
      total += v;
    }
    if (total > 0.0) {
      for (int64_t j = 0; j < hi - lo; ++j) w[j] = static_cast<float>(w[j] / total);
    }
    axis.first[i] = lo;
    axis.count[i] = hi - lo;
  }
  return axis;
}

// Resizes `channels` planes of in_size to out_size (rows first, then columns).
std::vector<float> Resize(const std::vector<float>& planes, int64_t channels, ImageSize in,
                          ImageSize out) {
  if (in == out) return planes;
  AxisWeights horizontal = ComputeWeights(in.width, out.width);
  AxisWeights vertical = ComputeWeights(in.height, out.height);
  std::vector<float> temp(channels * in.height * out.width);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t y = 0; y < in.height; ++y) {
      const float* src = &planes[(c * in.height + y) * in.width];
      float* dst = &temp[(c * in.height + y) * out.width];
      for (int64_t x = 0; x < out.width; ++x) {
        const float* w = &horizontal.weights[x * horizontal.max_count];
        const float* s = src + horizontal.first[x];
        float sum = 0.0f;
        for (int64_t k = 0; k < horizontal.count[x]; ++k) sum += w[k] * s[k];
        dst[x] = sum;
      }
    }
  }
  std::vector<float> result(channels * out.height * out.width);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t y = 0; y < out.height; ++y) {
      const float* w = &vertical.weights[y * vertical.max_count];
      float* dst = &result[(c * out.height + y) * out.width];
      for (int64_t k = 0; k < vertical.count[y]; ++k) {
        const float* src = &temp[(c * in.height + vertical.first[y] + k) * out.width];
        for (int64_t x = 0; x < out.width; ++x) dst[x] += w[k] * src[x];
      }
    }
  }
  return result;
}

}  // namespace

StatusOr<PreprocessSpec> ParsePreprocessSpec(std::string_view text) {
  PreprocessSpec spec;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.size() - start : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    bool has_value = eq != std::string_view::npos;
    if (key == "resize" && has_value) {
      if (value.find('x') == std::string_view::npos) {
        ASSIGN_OR_RETURN(spec.resize_shorter, ParsePositive(value, item));
        spec.resize_exact.reset();
      } else {
        ASSIGN_OR_RETURN(spec.resize_exact, ParseSize(value, item));
        spec.resize_shorter.reset();
      }
    } else if (key == "crop" && has_value) {
      ASSIGN_OR_RETURN(spec.crop, ParseSize(value, item));
    } else if ((key == "scale" || key == "mean" || key == "std") && has_value) {
      ASSIGN_OR_RETURN(std::vector<float> values, ParseFloats(value, item));
      if (key == "scale") {
        if (values.size() != 1) {
          return InvalidArgumentError("preprocess spec: 'scale' takes one number");
        }
        spec.scale = values[0];
      } else if (values.size() != 1 && values.size() != 3) {
        return InvalidArgumentError("preprocess spec: '" + std::string(key) +
                                    "' takes one number or three (M0:M1:M2)");
      } else if (key == "mean") {
        spec.mean = values;
      } else {
        for (float v : values) {
          if (v == 0.0f) return InvalidArgumentError("preprocess spec: 'std' must not be 0");
        }
        spec.std = values;
      }
    } else if (!has_value && (key == "gray" || key == "grey")) {
      spec.gray = true;
    } else if (!has_value && (key == "bgr" || key == "rgb")) {
      spec.bgr = key == "bgr";
    } else if (!has_value && (key == "nhwc" || key == "nchw")) {
      spec.nhwc = key == "nhwc";
    } else {
      return InvalidArgumentError("preprocess spec: unknown item '" + std::string(item) +
                                  "'; accepted: " + kAcceptedItems);
    }
  }
  if (spec.gray && (spec.mean.size() == 3 || spec.std.size() == 3)) {
    return InvalidArgumentError(
        "preprocess spec: 'gray' gives one channel, so mean and std take one number each");
  }
  return spec;
}

Status PreprocessImage(const RgbImage& image, const PreprocessSpec& spec, ImageSize size,
                       const std::string& path, float* out) {
  const int64_t channels = spec.channels();
  const ImageSize original{image.height, image.width};
  const int64_t pixels = image.height * image.width;
  // Float planes in output channel order.
  std::vector<float> planes(channels * pixels);
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t* rgb = &image.pixels[p * 3];
    if (spec.gray) {
      planes[p] = 0.299f * rgb[0] + 0.587f * rgb[1] + 0.114f * rgb[2];
    } else {
      for (int64_t c = 0; c < 3; ++c) planes[c * pixels + p] = rgb[spec.bgr ? 2 - c : c];
    }
  }
  ImageSize resized = original;
  if (spec.resize_exact) {
    resized = *spec.resize_exact;
  } else if (spec.resize_shorter) {
    int64_t n = *spec.resize_shorter;
    // torchvision: the longer side becomes int(n * long / short).
    if (original.height <= original.width) {
      resized = {n,
                 static_cast<int64_t>(static_cast<double>(n) * original.width / original.height)};
    } else {
      resized = {static_cast<int64_t>(static_cast<double>(n) * original.height / original.width),
                 n};
    }
  } else if (!spec.crop) {
    resized = size;
  }
  if (resized.height < size.height || resized.width < size.width) {
    return InvalidArgumentError(
        path + ": image is " + std::to_string(resized.height) + "x" +
        std::to_string(resized.width) + (resized == original ? "" : " after resizing") +
        ", smaller than the " + std::to_string(size.height) + "x" + std::to_string(size.width) +
        " crop; raise resize= or lower crop= in the preprocess spec");
  }
  std::vector<float> scaled = Resize(planes, channels, original, resized);
  // torchvision's center crop: top = round((H - h) / 2).
  const int64_t top = static_cast<int64_t>(std::round((resized.height - size.height) / 2.0));
  const int64_t left = static_cast<int64_t>(std::round((resized.width - size.width) / 2.0));
  for (int64_t c = 0; c < channels; ++c) {
    const float mean = spec.mean.size() == 1 ? spec.mean[0] : spec.mean[c];
    const float inv_std = 1.0f / (spec.std.size() == 1 ? spec.std[0] : spec.std[c]);
    for (int64_t y = 0; y < size.height; ++y) {
      const float* src = &scaled[(c * resized.height + top + y) * resized.width + left];
      for (int64_t x = 0; x < size.width; ++x) {
        float v = (src[x] * spec.scale - mean) * inv_std;
        int64_t index = spec.nhwc ? (y * size.width + x) * channels + c
                                  : (c * size.height + y) * size.width + x;
        out[index] = v;
      }
    }
  }
  return Status::Ok();
}

}  // namespace qtune::quant
