// Text lines for measuring a recognizer (PP-OCRv4 rec) end to end, the way PaddleOCR
// feeds it: the detector (DBNet, fp32) finds the lines of an image, each line is cropped
// from the original image, resized to height 48 and normalized as PaddleOCR's rec
// preprocessing does; the recognizer's per-step class probabilities are read by CTC greedy
// decoding. A simplification of PaddleOCR's pipeline, for tests: axis-aligned boxes
// (connected components of the probability map, grown as its unclip grows a rectangle),
// no rotation of vertical text (such boxes are dropped), and one fixed input width.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "quant/image_io.h"

namespace qtune::quant::testing {

// The recognizer's input: [N, 3, kRecHeight, kRecWidth] (PP-OCRv4 rec's 3x48x320).
inline constexpr int64_t kRecHeight = 48;
inline constexpr int64_t kRecWidth = 320;

// A box in the pixels of the original image: columns [x0, x1), rows [y0, y1).
struct TextBox {
  int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int64_t width() const { return x1 - x0; }
  int64_t height() const { return y1 - y0; }
};

// The text lines the detector `det` (input "x", output a [1,1,H,W] probability map) finds
// in `image`: the image is resized to multiples of 32 (longer side at most 960, as
// PaddleOCR's det_limit_side_len), pixels of the map above 0.3 are grouped into
// 8-connected components; a component is kept if its mean probability is >= 0.6 and both
// sides are >= 3 map pixels (PaddleOCR's box_thresh and min_size), its bounding box grows
// on every side by area * 1.5 / perimeter (PaddleOCR's unclip, unclip_ratio 1.5, for a
// rectangle) and is mapped back to the image. Boxes taller than wide are dropped. Sorted
// top to bottom, then left to right.
StatusOr<std::vector<TextBox>> DetectLines(const ir::Graph& det, const RgbImage& image);

// Splits boxes whose width exceeds what fits kRecWidth at kRecHeight (aspect 320/48) into
// that many pieces, each cut at the column of least contrast (a gap between words, where
// there is one) near the even split.
std::vector<TextBox> SplitLongLines(const RgbImage& image, const std::vector<TextBox>& boxes);

// Writes the recognizer input of one box into `out` (3 x kRecHeight x kRecWidth floats):
// the crop resized to height 48 keeping its aspect (width ceil(48 * w / h), at most 320),
// channels B, G, R, (x / 255 - 0.5) / 0.5, padded on the right with 0 (PaddleOCR's
// resize_norm_img).
Status WriteRecInput(const RgbImage& image, const TextBox& box, float* out);

// The lines of several images, ready for the recognizer.
struct LineCrops {
  Tensor crops;                    // [N, 3, kRecHeight, kRecWidth] float32
  std::vector<std::string> where;  // per crop: "file.png (x0,y0)-(x1,y1)"
};

// DetectLines + SplitLongLines + WriteRecInput over the images at `paths`, in order.
StatusOr<LineCrops> CropLines(const ir::Graph& det, const std::vector<std::string>& paths);

// PaddleOCR's character list for a CTC head: index 0 is the blank (""), then one entry per
// line of the dictionary file, then " " (use_space_char). Errors name the file.
StatusOr<std::vector<std::string>> LoadCtcCharacters(const std::string& dictionary_path);

// CTC greedy decoding of [N, T, C] per-step scores (probabilities or logits): argmax per
// step, repeats collapsed, blanks (class 0) dropped, classes mapped by `characters`.
// REQUIRES: C == characters.size().
std::vector<std::string> CtcGreedyDecode(const Tensor& scores,
                                         const std::vector<std::string>& characters);

}  // namespace qtune::quant::testing
