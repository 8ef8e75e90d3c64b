// Decoding calibration images: JPEG (libjpeg) and PNG (libpng) files into 8-bit RGB.
// The format is recognized by the file's magic bytes, not its name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace qtune::quant {

// Largest image decoded (width * height); bigger ones are refused before any pixel memory
// is committed.
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 28;

// An 8-bit RGB image, rows top to bottom, pixels interleaved (HWC).
struct RgbImage {
  int64_t width = 0;
  int64_t height = 0;
  std::vector<uint8_t> pixels;  // height * width * 3
};

// Reads and decodes a JPEG or PNG file. Grayscale, palette and 16-bit PNGs become 8-bit
// RGB; an alpha channel is composed onto black. CMYK JPEGs are refused. Errors name the
// file and what is wrong (not an image, truncated or corrupt data, too big).
StatusOr<RgbImage> ReadImage(const std::string& path);

// True if the file name ends in .jpg, .jpeg or .png (any case): the files an image folder
// contributes.
bool HasImageExtension(const std::string& file_name);

}  // namespace qtune::quant
