// The preprocessing spec for image-folder calibration data (docs/calibration.md), and
// turning one decoded image into float model input.
//
// Spec: comma-separated items, applied in this order:
//   gray            convert to one luma channel (0.299 R + 0.587 G + 0.114 B)
//   resize=N        scale so the shorter side is N, keeping the aspect ratio
//   resize=HxW      scale to exactly H x W
//                   (both: bilinear with antialiasing when shrinking, as PIL / torchvision)
//   crop=N, crop=HxW   center crop
//   scale=S         multiply pixel values (0..255) by S            (default 1)
//   mean=M or mean=M0:M1:M2, std=S or std=S0:S1:S2
//                   then (x - mean) / std per channel, listed in the output channel
//                   order (after bgr)                               (default 0 and 1)
//   bgr             channel order B, G, R (default R, G, B)
//   nhwc            layout H, W, C (default C, H, W)
// e.g. "resize=256,crop=224,scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225".
// When neither resize nor crop is given, images are resized to the model's input size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "quant/image_io.h"

namespace qtune::quant {

struct ImageSize {
  int64_t height = 0;
  int64_t width = 0;
  bool operator==(const ImageSize&) const = default;
};

struct PreprocessSpec {
  std::optional<int64_t> resize_shorter;  // resize=N
  std::optional<ImageSize> resize_exact;  // resize=HxW
  std::optional<ImageSize> crop;          // crop=N (square) or crop=HxW
  float scale = 1.0f;
  std::vector<float> mean = {0.0f};  // one value, or one per channel
  std::vector<float> std = {1.0f};
  bool gray = false;
  bool bgr = false;
  bool nhwc = false;

  int64_t channels() const { return gray ? 1 : 3; }
};

// Parses the spec string (empty: all defaults). Errors quote the bad item and list the
// accepted ones.
StatusOr<PreprocessSpec> ParsePreprocessSpec(std::string_view spec);

// Writes the preprocessed image into `out`: channels() x size (CHW) or size x channels()
// (HWC, with nhwc), float32. If neither resize nor crop is set the image is resized to
// `size`; otherwise the resized (or original) image is center cropped to `size`.
// Fails (naming `path`) if the image is smaller than the crop.
Status PreprocessImage(const RgbImage& image, const PreprocessSpec& spec, ImageSize size,
                       const std::string& path, float* out);

}  // namespace qtune::quant
