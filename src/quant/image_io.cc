#include "quant/image_io.h"

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#include <png.h>

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <cstring>

#include "core/file_io.h"

namespace qtune::quant {
namespace {

constexpr int64_t kMaxImageFileBytes = int64_t{1} << 30;

struct JpegErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void OnJpegError(j_common_ptr cinfo) {
  auto* manager = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, manager->message);
  std::longjmp(manager->jump, 1);
}

// Warnings stay quiet, except "premature end of data": libjpeg would fill the missing rows
// with gray, and a truncated file must fail instead.
void OnJpegMessage(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) OnJpegError(cinfo);
}

enum class JpegResult { kOk, kError, kTooBig, kCmyk };

// libjpeg reports errors by longjmp, so this function keeps only trivially destructible
// locals; `pixels` belongs to the caller. On kError, `message` holds libjpeg's text.
JpegResult DecodeJpeg(const unsigned char* data, size_t size, std::vector<uint8_t>* pixels,
                      int64_t* width, int64_t* height, char* message) {
  jpeg_decompress_struct cinfo;
  std::memset(&cinfo, 0, sizeof(cinfo));  // jpeg_destroy_decompress is safe on it
  JpegErrorManager errors;
  cinfo.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = OnJpegError;
  errors.base.emit_message = OnJpegMessage;
  errors.message[0] = '\0';
  if (setjmp(errors.jump)) {
    std::strncpy(message, errors.message, JMSG_LENGTH_MAX);
    jpeg_destroy_decompress(&cinfo);
    return JpegResult::kError;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&cinfo);
    return JpegResult::kCmyk;
  }
  if (static_cast<int64_t>(cinfo.image_width) * cinfo.image_height > kMaxImagePixels) {
    jpeg_destroy_decompress(&cinfo);
    return JpegResult::kTooBig;
  }
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  *width = cinfo.output_width;
  *height = cinfo.output_height;
  const size_t row_bytes = static_cast<size_t>(cinfo.output_width) * 3;
  pixels->resize(row_bytes * cinfo.output_height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = pixels->data() + row_bytes * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return JpegResult::kOk;
}

StatusOr<RgbImage> ReadJpeg(const std::string& bytes, const std::string& path) {
  RgbImage image;
  char message[JMSG_LENGTH_MAX] = {0};
  JpegResult result = DecodeJpeg(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                                 &image.pixels, &image.width, &image.height, message);
  switch (result) {
    case JpegResult::kOk:
      return image;
    case JpegResult::kTooBig:
      return ResourceExhaustedError(path + ": JPEG image larger than " +
                                    std::to_string(kMaxImagePixels) +
                                    " pixels; shrink it or leave it out of the folder");
    case JpegResult::kCmyk:
      return UnimplementedError(path + ": CMYK JPEG images are not supported; convert to RGB");
    case JpegResult::kError:
      break;
  }
  return DataLossError(path + ": corrupt or truncated JPEG (" + message + ")");
}

StatusOr<RgbImage> ReadPng(const std::string& bytes, const std::string& path) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size())) {
    std::string message = png.message;
    png_image_free(&png);
    return DataLossError(path + ": corrupt PNG (" + message + ")");
  }
  if (static_cast<int64_t>(png.width) * png.height > kMaxImagePixels) {
    png_image_free(&png);
    return ResourceExhaustedError(path + ": PNG image larger than " +
                                  std::to_string(kMaxImagePixels) +
                                  " pixels; shrink it or leave it out of the folder");
  }
  png.format = PNG_FORMAT_RGB;  // alpha, if any, is composed onto black
  RgbImage image;
  image.width = png.width;
  image.height = png.height;
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    std::string message = png.message;
    png_image_free(&png);
    return DataLossError(path + ": corrupt or truncated PNG (" + message + ")");
  }
  return image;
}

}  // namespace

StatusOr<RgbImage> ReadImage(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, kMaxImageFileBytes));
  auto starts_with = [&](const char* magic, size_t n) {
    return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0;
  };
  if (starts_with("\xFF\xD8\xFF", 3)) return ReadJpeg(bytes, path);
  if (starts_with("\x89PNG\r\n\x1A\n", 8)) return ReadPng(bytes, path);
  return InvalidArgumentError(path + ": not a JPEG or PNG file (unknown magic bytes)");
}

bool HasImageExtension(const std::string& file_name) {
  std::string lower = file_name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* ext : {".jpg", ".jpeg", ".png"}) {
    size_t n = std::strlen(ext);
    if (lower.size() > n && lower.compare(lower.size() - n, n, ext) == 0) return true;
  }
  return false;
}

}  // namespace qtune::quant
